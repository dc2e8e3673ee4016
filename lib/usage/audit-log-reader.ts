import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { Transform, TransformCallback } from 'node:stream';
import * as zlib from 'node:zlib';
import { fileErrorText } from '../private/file-error-text';
import { canonicalStoreNamespace } from '../model/store-namespace';

/**
 * What the usage report needs of one `type: "response"` entry of a store's file audit device
 * (OpenBao and HashiCorp Vault write the same shape). Values the device HMACs (Secret IDs, role
 * IDs, JWTs, error texts in `response.data`) are never read into it, but for the token links
 * ({@link AuditEntry.token}, {@link AuditEntry.issued}: HMAC-ed accessors, never printed) that tie
 * a request to the login that issued its token.
 */
export interface AuditEntry {
  /** `time`, as written (RFC 3339, UTC). */
  readonly time: string;
  /** `time` in milliseconds since the epoch. */
  readonly epochMs: number;
  /** `request.path`. */
  readonly path: string;
  /** `request.operation` (`read`, `update`, `list`, ...). */
  readonly operation: string;
  /** `request.mount_point` (`auth/jwt/`, `secret/`), when the store wrote one. */
  readonly mountPoint?: string;
  /** `request.mount_type` (`jwt`, `approle`, `kv`), when the store wrote one. */
  readonly mountType?: string;
  /** `auth.metadata.role` (JWT and OIDC tokens). */
  readonly jwtRole?: string;
  /** `auth.metadata.role_name` (AppRole tokens). */
  readonly appRole?: string;
  /** `auth.display_name` (`jwt-<subject>`, `approle`): starts with the auth mount path. */
  readonly displayName?: string;
  /**
   * True when the entry's `auth` names a client token: the requesting token's, or on a login path
   * the token the login issued (a failed login has none).
   */
  readonly issuedToken: boolean;
  /** The plain `error` field (`1 error occurred: * permission denied`, `invalid credentials`). */
  readonly error?: string;
  /** True when the response carries an error in `response.data.error` (its text HMAC-ed). */
  readonly responseError: boolean;
  /** `request.data.role` of a JWT login when the mount lets it through un-HMAC-ed. */
  readonly loginRole?: string;
  /**
   * The namespace the request was made in: `request.namespace.path` without its slashes (OpenBao
   * writes `ns1/`); `''` for the root namespace (`{"id": "root"}`, no path). Paths are relative to it.
   */
  readonly namespace: string;
  /**
   * The requesting token, as the device wrote it: `auth.accessor`, else `auth.client_token` (a
   * batch token has no accessor). HMAC-ed by default, with the device's one key, so it equals the
   * value the token's login wrote: the link from a request to its login. Never printed. On a login,
   * the token the login issued.
   */
  readonly token?: string;
  /**
   * The token this request issued: `response.auth.accessor`, else `response.auth.client_token`. A
   * login's token, or a child token (`auth/token/create` with the requesting token as its parent).
   */
  readonly issued?: string;
}

/** The time window of a read: entries with `since <= time < until`. */
export interface AuditWindow {
  /** Start, inclusive, in milliseconds since the epoch. */
  readonly sinceMs?: number;
  /** End, exclusive, in milliseconds since the epoch. */
  readonly untilMs?: number;
  /**
   * The time of the read: an entry dated later (beyond {@link CLOCK_SKEW_MS}) cannot be a request
   * made yet, so it is set apart ({@link AuditReadCounts.future}), never counted as recent use.
   * Without it, no entry is taken as dated in the future.
   */
  readonly nowMs?: number;
}

/** What a read of audit files counted besides the entries it handed on. */
export interface AuditReadCounts {
  /** Lines read, over all files. */
  lines: number;
  /** `type: "response"` entries inside the window handed on. */
  responses: number;
  /** Lines that are not a JSON object of the audit device's shape, as `file:line` (the first 20). */
  malformed: string[];
  /** Number of malformed lines. */
  malformedCount: number;
  /**
   * Entries dated after the time of the read ({@link AuditWindow.nowMs}, beyond {@link CLOCK_SKEW_MS}),
   * as `file:line` (the first 20): a store clock far ahead or an edited log; never counted as use.
   */
  future?: string[];
  /** Number of entries dated after the time of the read. */
  futureCount?: number;
}

/**
 * How far an entry may be dated after the time of the read and still be counted: the store's clock
 * and this machine's may disagree by this much. Later entries are set apart ({@link AuditReadCounts.future}).
 */
export const CLOCK_SKEW_MS = 5 * 60_000;

/**
 * The longest line read: an audit entry is one line, and the device HMACs every value, so a real
 * entry is far shorter. A longer line (a file that is not an audit log) ends the read with an error
 * instead of filling memory.
 */
export const MAX_AUDIT_LINE_BYTES = 64 * 1024 * 1024;

/** Passes bytes through, and fails when a line grows longer than `max` bytes. */
class LineLengthBound extends Transform {
  private current = 0;
  private line = 1;

  constructor(private readonly max: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    for (let i = chunk.indexOf(10, start); i !== -1; i = chunk.indexOf(10, start)) {
      if (this.current + i - start > this.max) return done(this.tooLong());
      this.current = 0;
      this.line++;
      start = i + 1;
    }
    this.current += chunk.length - start;
    if (this.current > this.max) return done(this.tooLong());
    done(null, chunk);
  }

  private tooLong(): Error {
    return new Error(`line ${this.line} is longer than ${this.max / (1024 * 1024)} MiB, which no audit entry is: it is not a file audit device's log`);
  }
}

/** A value HMAC-ed by the audit device: never shown as if it were the value. */
export function isHmaced(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith('hmac-sha256:');
}

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** Whether a file starts with the gzip magic bytes (rotated files are often compressed, named or not `.gz`). */
function isGzip(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(2);
    return fs.readSync(fd, head, 0, 2, 0) === 2 && head.equals(GZIP_MAGIC);
  } finally {
    fs.closeSync(fd);
  }
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * One parsed line: the response entry it holds, `'skip'` for a well-formed entry the report does
 * not count (the `request` twin of every response, the device's own test line), or `undefined`
 * for a line that is not an audit entry.
 */
export function parseAuditLine(line: string): AuditEntry | 'skip' | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  const entry = record(raw);
  const request = record(entry?.request);
  if (!entry || !request || (entry.type !== 'request' && entry.type !== 'response')) return undefined;
  const time = text(entry.time);
  const epochMs = time === undefined ? NaN : Date.parse(time);
  if (time === undefined || Number.isNaN(epochMs)) return undefined;
  // Every request is logged twice; the response says how it ended, so it alone is counted.
  if (entry.type === 'request') return 'skip';
  const path = text(request.path);
  const operation = text(request.operation);
  if (path === undefined || operation === undefined) return undefined;
  const auth = record(entry.auth);
  const metadata = record(auth?.metadata);
  const response = record(entry.response);
  const requestData = record(request.data);
  const loginRole = text(requestData?.role);
  const issuedAuth = record(response?.auth);
  const namespace = text(record(request.namespace)?.path);
  return {
    time,
    epochMs,
    path,
    operation,
    mountPoint: text(request.mount_point),
    mountType: text(request.mount_type),
    jwtRole: text(metadata?.role),
    appRole: text(metadata?.role_name),
    displayName: text(auth?.display_name),
    issuedToken: text(auth?.client_token) !== undefined,
    error: text(entry.error),
    responseError: record(response?.data)?.error !== undefined,
    loginRole: loginRole !== undefined && !isHmaced(loginRole) ? loginRole : undefined,
    namespace: namespace === undefined ? '' : canonicalStoreNamespace(namespace),
    token: text(auth?.accessor) ?? text(auth?.client_token),
    issued: text(issuedAuth?.accessor) ?? text(issuedAuth?.client_token),
  };
}

/**
 * Streams the response entries of audit files, one line at a time (plain or gzip-compressed,
 * told by their first bytes), keeping nothing but the counts: memory stays bounded whatever the
 * size of the log (a line is at most {@link MAX_AUDIT_LINE_BYTES}). Entries outside `window` are
 * skipped; entries dated after its `nowMs` (beyond {@link CLOCK_SKEW_MS}) are counted in
 * {@link AuditReadCounts.future}, not handed on; files are read in the order given (see
 * {@link inLogOrder}).
 * @param before sees each entry dated before the window's start (not counted): the logins there
 *   still name the tokens of the requests inside the window
 * @throws Error naming the file when it cannot be read
 */
export async function* readAuditEntries(files: readonly string[], window: AuditWindow, counts: AuditReadCounts, before?: (entry: AuditEntry) => void): AsyncGenerator<AuditEntry> {
  for (const file of files) {
    const stream = fs.createReadStream(file);
    const bound = new LineLengthBound(MAX_AUDIT_LINE_BYTES);
    const gunzip = isGzip(file) ? zlib.createGunzip() : undefined;
    const input = (gunzip === undefined ? stream : stream.pipe(gunzip)).pipe(bound);
    // An error of the file or the decompression ends the read and is thrown once the lines stop.
    // (Not a Promise.race of every line with one pending failure promise: each race leaves a
    // reaction, holding its line, on that promise until the end of the file: memory grew with lines.)
    const lines = readline.createInterface({ input, crlfDelay: Infinity });
    let failed: Error | undefined;
    const fail = (e: Error) => {
      failed ??= new Error(`cannot read the audit log ${file}: ${fileErrorText(e)}`);
      lines.close();
    };
    // pipe() does not pass errors on: each stage's own is caught.
    stream.on('error', fail);
    gunzip?.on('error', fail);
    input.on('error', fail);
    // A reader that stops early (an error, a consumer that returns) closes the file at once.
    try {
      let n = 0;
      const iterator = lines[Symbol.asyncIterator]();
      for (;;) {
        let next: IteratorResult<string>;
        try {
          next = await iterator.next();
        } catch (e) {
          // The iterator may reject with the input's error itself: named like the others.
          throw failed ?? new Error(`cannot read the audit log ${file}: ${fileErrorText(e)}`);
        }
        if (next.done || failed) break;
        const read = next.value;
        n++;
        counts.lines++;
        const line = read.trim();
        if (line === '') continue;
        const entry = parseAuditLine(line);
        if (entry === undefined) {
          counts.malformedCount++;
          if (counts.malformed.length < 20) counts.malformed.push(`${file}:${n}`);
          continue;
        }
        if (entry === 'skip') continue;
        if (window.sinceMs !== undefined && entry.epochMs < window.sinceMs) {
          before?.(entry);
          continue;
        }
        if (window.untilMs !== undefined && entry.epochMs >= window.untilMs) continue;
        if (window.nowMs !== undefined && entry.epochMs > window.nowMs + CLOCK_SKEW_MS) {
          counts.futureCount = (counts.futureCount ?? 0) + 1;
          const future = (counts.future ??= []);
          if (future.length < 20) future.push(`${file}:${n}`);
          continue;
        }
        counts.responses++;
        yield entry;
      }
      if (failed) throw failed;
    } finally {
      lines.close();
      stream.destroy();
      input.destroy();
    }
  }
}

const RELATIVE_TIME = /^(\d+)([dhm])$/;
const UNIT_MS: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000, m: 60_000 };

/**
 * A window bound as milliseconds since the epoch: an ISO date or time (`2026-11-01`,
 * `2026-11-01T12:00:00Z`) or a duration before `nowMs` (`90d`, `12h`, `30m`); `undefined` for a
 * value that is neither, or a time outside what a date can hold (±100,000,000 days from 1970).
 */
export function auditTime(value: string, nowMs: number): number | undefined {
  const relative = RELATIVE_TIME.exec(value);
  // A duration so long that the time before now is none a date can hold (`99999999999999999d`) is no time.
  const ms = relative ? nowMs - Number(relative[1]) * UNIT_MS[relative[2]] : /^\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? Date.parse(value) : NaN;
  return Number.isNaN(new Date(ms).getTime()) ? undefined : ms;
}

/** The time of a file's first audit entry (of its first 1,000 lines), undefined when it has none or cannot be read. */
async function firstEntryMs(file: string): Promise<number | undefined> {
  let stream: fs.ReadStream | undefined;
  let lines: readline.Interface | undefined;
  try {
    stream = fs.createReadStream(file);
    const gunzip = isGzip(file) ? zlib.createGunzip() : undefined;
    const input = (gunzip === undefined ? stream : stream.pipe(gunzip)).pipe(new LineLengthBound(MAX_AUDIT_LINE_BYTES));
    const failed = new Promise<undefined>((resolve) => {
      const streams: NodeJS.EventEmitter[] = gunzip === undefined ? [stream!, input] : [stream!, gunzip, input];
      for (const s of streams) s.on('error', () => resolve(undefined));
    });
    lines = readline.createInterface({ input, crlfDelay: Infinity });
    const first = (async () => {
      let n = 0;
      for await (const line of lines!) {
        if (++n > 1000) return undefined;
        try {
          const ms = Date.parse(String(record(JSON.parse(line))?.time));
          if (!Number.isNaN(ms)) return ms;
        } catch {
          /* not an entry: the next line */
        }
      }
      return undefined;
    })();
    return await Promise.race([first, failed]);
  } catch {
    return undefined;
  } finally {
    lines?.close();
    stream?.destroy();
  }
}

/**
 * The files in the order the device wrote them: by the time of their first entry (files without an
 * entry last, in the order given). A token's requests are told by its login, logged before them
 * (docs/usage.md §2): rotated files given in any order are read oldest first.
 */
export async function inLogOrder(files: readonly string[]): Promise<string[]> {
  const firsts = await Promise.all(files.map(async (file, i) => ({ file, i, ms: await firstEntryMs(file) })));
  return firsts
    .sort((a, b) => (a.ms ?? Infinity) - (b.ms ?? Infinity) || a.i - b.i)
    .map((f) => f.file);
}
