import * as fs from 'node:fs';
import * as readline from 'node:readline';
import * as zlib from 'node:zlib';

/**
 * What the usage report needs of one `type: "response"` entry of a store's file audit device
 * (OpenBao and HashiCorp Vault write the same shape). Values the device HMACs (tokens, accessors,
 * Secret IDs, role IDs, JWTs, error texts in `response.data`) are never read into it.
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
}

/** The time window of a read: entries with `since <= time < until`. */
export interface AuditWindow {
  /** Start, inclusive, in milliseconds since the epoch. */
  readonly sinceMs?: number;
  /** End, exclusive, in milliseconds since the epoch. */
  readonly untilMs?: number;
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
  };
}

/**
 * Streams the response entries of audit files, one line at a time (plain or gzip-compressed,
 * told by their first bytes), keeping nothing but the counts: memory stays bounded whatever the
 * size of the log. Entries outside `window` are skipped; files are read in the order given.
 * @throws Error naming the file when it cannot be read
 */
export async function* readAuditEntries(files: readonly string[], window: AuditWindow, counts: AuditReadCounts): AsyncGenerator<AuditEntry> {
  for (const file of files) {
    const stream = fs.createReadStream(file);
    const input = isGzip(file) ? stream.pipe(zlib.createGunzip()) : stream;
    // An error of the file or the decompression ends the read and is thrown once the lines stop.
    // (Not a Promise.race of every line with one pending failure promise: each race leaves a
    // reaction, holding its line, on that promise until the end of the file: memory grew with lines.)
    const lines = readline.createInterface({ input, crlfDelay: Infinity });
    let failed: Error | undefined;
    const fail = (e: Error) => {
      failed ??= new Error(`cannot read the audit log ${file}: ${e.message}`);
      lines.close();
    };
    stream.on('error', fail);
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
          throw failed ?? new Error(`cannot read the audit log ${file}: ${(e as Error).message}`);
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
        if (window.sinceMs !== undefined && entry.epochMs < window.sinceMs) continue;
        if (window.untilMs !== undefined && entry.epochMs >= window.untilMs) continue;
        counts.responses++;
        yield entry;
      }
      if (failed) throw failed;
    } finally {
      lines.close();
      stream.destroy();
    }
  }
}

const RELATIVE_TIME = /^(\d+)([dhm])$/;
const UNIT_MS: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000, m: 60_000 };

/**
 * A window bound as milliseconds since the epoch: an ISO date or time (`2026-11-01`,
 * `2026-11-01T12:00:00Z`) or a duration before `nowMs` (`90d`, `12h`, `30m`); `undefined` for a
 * value that is neither.
 */
export function auditTime(value: string, nowMs: number): number | undefined {
  const relative = RELATIVE_TIME.exec(value);
  if (relative) return nowMs - Number(relative[1]) * UNIT_MS[relative[2]];
  if (!/^\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
