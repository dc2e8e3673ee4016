import { createHash, createHmac, timingSafeEqual } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { compareStrings } from '../private/compare-strings';

/**
 * Environment variable naming the directory of the synthesis cache (relative to the working
 * directory); unset: no cache. The configuration pipeline sets it to {@link DEFAULT_SYNTH_CACHE_DIR}
 * and keeps that directory in its `cache:`.
 */
export const SYNTH_CACHE_VARIABLE = 'SECRETSTORE_IAC_SYNTH_CACHE';
/**
 * Environment variable holding a secret that seals the cache's entries (HMAC-SHA256): set, an entry
 * is used only when its seal was made with the same secret, so whoever can write the cache but does
 * not hold the secret cannot have an edited entry read (docs/pipelines.md §7). A CI variable,
 * protected and masked, given to the protected pipelines only.
 */
export const SYNTH_CACHE_SECRET_VARIABLE = 'SECRETSTORE_IAC_SYNTH_CACHE_SECRET';
/**
 * The CI variable that says whether a job runs for a protected ref (`true`): its cache entries are
 * kept apart from the unprotected ones ({@link synthesisCacheDir}).
 */
export const PROTECTED_REF_VARIABLE = 'CI_COMMIT_REF_PROTECTED';
/** The directory the configuration pipeline keeps its synthesis cache in (docs/pipelines.md §7). */
export const DEFAULT_SYNTH_CACHE_DIR = '.secretstore-iac/synth-cache';
/** The file of an entry that records what it holds and each file's SHA-256. */
const ENTRY_RECORD = 'entry.json';
/** The synthesized output of an entry. */
const ENTRY_OUTPUT = 'out';
/** Version of the entry layout: an entry of another layout is ignored (2: sealed). */
const FORMAT = 2;

/** What a synthesis depends on: the same identity synthesizes to the same output. */
export interface SynthesisIdentity {
  /** The git tree of the configuration (the commit's root tree: every file synthesis reads from the repository). */
  readonly tree: string;
  /** The library that synthesizes it: the version the commit locks, or the one this checkout installs. */
  readonly library: string;
}

/** The cache key of a synthesis identity: 64 hex digits. */
export function synthesisKey(identity: SynthesisIdentity): string {
  return createHash('sha256').update(JSON.stringify([FORMAT, identity.tree, identity.library])).digest('hex');
}

/** A cache entry that verified: its output directory and each file's recorded SHA-256. */
export interface VerifiedEntry {
  /** The entry's key ({@link synthesisKey}). */
  readonly key: string;
  /** The entry's output directory: the cache's, read it, never write. */
  readonly outdir: string;
  /** Every file of the output, by path relative to it (`stacks/app-roles/cdk.tf.json`), with its SHA-256 (hex) as the sealed record holds it. */
  readonly files: Readonly<Record<string, string>>;
}

interface EntryRecord {
  readonly format: number;
  readonly key: string;
  readonly identity: SynthesisIdentity;
  /** Every file of the output, by path relative to it, with its SHA-256. */
  readonly files: Record<string, string>;
  /** The seal over format, key, identity and files ({@link sealOf}). */
  readonly seal: string;
}

/**
 * The seal of an entry: HMAC-SHA256 with `secret` (or SHA-256 without one) of its format, key,
 * identity and every file's name and digest, in a canonical order. Without a secret it only binds
 * the record to its key and files (an edit of a file alone, or a record moved to another key, is
 * refused); whoever can write the cache can compute it again, which is why an unprotected pipeline's
 * cache is kept apart ({@link synthesisCacheDir}) and a secret is the seal of record.
 */
function sealOf(record: Omit<EntryRecord, 'seal'>, secret: string | undefined): string {
  const text = JSON.stringify([record.format, record.key, record.identity.tree, record.identity.library, Object.entries(record.files).sort(([a], [b]) => compareStrings(a, b))]);
  return secret === undefined ? `sha256:${createHash('sha256').update(text).digest('hex')}` : `hmac-sha256:${createHmac('sha256', secret).update(text).digest('hex')}`;
}

/**
 * The directory of the synthesis cache for a job: `dir`, and below it `protected/` or `unprotected/`
 * when the job says whether its ref is protected ({@link PROTECTED_REF_VARIABLE}): an entry an
 * unprotected pipeline (any merge request's branch) wrote is never read by a protected one.
 */
export function synthesisCacheDir(dir: string, env: Readonly<Record<string, string | undefined>>): string {
  const protectedRef = env[PROTECTED_REF_VARIABLE];
  if (protectedRef === undefined || protectedRef === '') return dir;
  return path.join(dir, protectedRef === 'true' ? 'protected' : 'unprotected');
}

/** The regular files below `dir`, relative paths with `/`, sorted; a symbolic link or other special file makes it undefined. */
function listFiles(dir: string): string[] | undefined {
  const files: string[] = [];
  const walk = (rel: string): boolean => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!walk(child)) return false;
      } else if (entry.isFile()) files.push(child);
      else return false;
    }
    return true;
  };
  return walk('') ? files.sort(compareStrings) : undefined;
}

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/**
 * A directory of synthesized outputs, one entry per {@link synthesisKey}: `<key>/out/` (the output)
 * and `<key>/entry.json` (the identity and every file's SHA-256). An entry is used only when every
 * file is there with its recorded digest and no other file is: a corrupt or partial entry (an
 * interrupted copy, a cache restored in part) is removed and synthesized again, never read. Entries
 * are written beside, then renamed into place, so a reader sees a whole entry or none. The most
 * recently used {@link SynthesisCache.keep} entries are kept. Each entry is sealed ({@link sealOf}):
 * the record binds the key (its identity must hash to it) and every file, and with a secret the seal
 * is an HMAC whoever lacks the secret cannot make; an entry whose seal does not verify is refused.
 * Without a secret the seal is a plain SHA-256 anyone who can write the cache computes again: such an
 * entry is unverified and not read ({@link SynthesisCache.lookup}, {@link SynthesisCache.latest}
 * synthesize instead), unless the cache was made for a use that trusts it no more than its reader's
 * own input (`unverifiedUse`: the merge request's shared base copy), and then the log says "unverified".
 */
export class SynthesisCache {
  /**
   * @param dir the cache directory (created when needed)
   * @param keep entries kept after a store, the most recently used
   * @param secret the secret entries are sealed with ({@link SYNTH_CACHE_SECRET_VARIABLE}); none: a
   *   plain digest, and entries are not read (unverified) unless `unverifiedUse` says why they may be
   * @param unverifiedUse why an entry sealed without a secret may be read here, one phrase for the log
   *   (`the merge request's base: it decides no more than the merge request itself`); none: never
   */
  constructor(
    readonly dir: string,
    readonly keep: number = 16,
    private readonly secret?: string,
    private readonly unverifiedUse?: string,
  ) {}

  /** True when an entry this cache reads was verified with a secret (an HMAC seal), not only a recomputable digest. */
  get verified(): boolean {
    return this.secret !== undefined;
  }

  /**
   * Why this cache reads no entry (no secret, and no use that trusts an unverified one), or undefined
   * when it reads them. Said once per read, so a job log never calls a recomputable seal verified.
   */
  private unread(): string | undefined {
    if (this.secret !== undefined || this.unverifiedUse !== undefined) return undefined;
    return `not read: ${SYNTH_CACHE_SECRET_VARIABLE} is not set, so an entry's seal is a plain SHA-256 anyone who can write the cache can compute again (unverified)`;
  }

  /** How an entry this cache read was verified, for the log. */
  get verification(): string {
    return this.secret !== undefined ? `seal verified: HMAC-SHA256 with ${SYNTH_CACHE_SECRET_VARIABLE}` : `unverified: a plain SHA-256 seal, read only for ${this.unverifiedUse}`;
  }

  /**
   * Why the cache cannot hold entries (its directory, or the nearest one that exists above it, is a
   * file, or is not writable), or undefined when it can: said before a synthesis that would store
   * its result there, not after it as a raw EEXIST or EACCES.
   */
  unusable(): string | undefined {
    let existing = this.dir;
    while (!fs.existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
    if (!fs.statSync(existing).isDirectory()) {
      return existing === this.dir ? `${this.dir} is a file, not a directory` : `${existing}, above it, is a file, not a directory`;
    }
    try {
      fs.accessSync(existing, fs.constants.W_OK | fs.constants.X_OK);
    } catch {
      return `${existing} is not writable by this user`;
    }
    return undefined;
  }

  /**
   * The output directory of the entry for `key`, or undefined when there is none, it is corrupt
   * (then it is removed, and `progress` says why), or it cannot be verified (no secret: `progress`
   * says so, and it is left). The directory is the cache's: read it, never write.
   */
  lookup(key: string, progress: (line: string) => void = () => undefined): string | undefined {
    const entry = path.join(this.dir, key);
    if (!fs.existsSync(entry)) return undefined;
    const unread = this.unread();
    if (unread !== undefined) {
      progress(`synthesis cache: the entry ${key.slice(0, 12)} is ${unread}: synthesizing again`);
      return undefined;
    }
    const problem = this.check(entry, key);
    if (problem !== undefined) {
      progress(`synthesis cache: ignoring the corrupt entry ${key.slice(0, 12)} (${problem}): synthesizing again`);
      fs.rmSync(entry, { recursive: true, force: true });
      return undefined;
    }
    // Most recently used: kept longest.
    const now = new Date();
    fs.utimesSync(path.join(entry, ENTRY_RECORD), now, now);
    return path.join(entry, ENTRY_OUTPUT);
  }

  /**
   * The most recently used entry that verifies (its seal, and every file against its recorded
   * digest), with those digests: what an incremental synthesis may reuse stacks from
   * (lib/sources/incremental-synthesis.ts). A corrupt entry is removed, as {@link lookup} does, and
   * the next one is tried; undefined when none verifies.
   */
  latest(progress: (line: string) => void = () => undefined): VerifiedEntry | undefined {
    if (!fs.existsSync(this.dir)) return undefined;
    const unread = this.unread();
    if (unread !== undefined) {
      progress(`synthesis cache: ${unread}: nothing reused`);
      return undefined;
    }
    const entries = fs
      .readdirSync(this.dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && /^[0-9a-f]{64}$/.test(e.name) && fs.existsSync(path.join(this.dir, e.name, ENTRY_RECORD)))
      .map((e) => ({ key: e.name, used: fs.statSync(path.join(this.dir, e.name, ENTRY_RECORD)).mtimeMs }))
      .sort((a, b) => b.used - a.used || compareStrings(a.key, b.key));
    for (const { key } of entries) {
      const entry = path.join(this.dir, key);
      const inspected = this.inspect(entry, key);
      if (typeof inspected === 'string') {
        progress(`synthesis cache: ignoring the corrupt entry ${key.slice(0, 12)} (${inspected})`);
        fs.rmSync(entry, { recursive: true, force: true });
        continue;
      }
      return { key, outdir: path.join(entry, ENTRY_OUTPUT), files: inspected.files };
    }
    return undefined;
  }

  /** Copies a synthesized output into the cache as the entry of `identity`; returns the entry's output directory. */
  store(identity: SynthesisIdentity, outdir: string): string {
    const key = synthesisKey(identity);
    const entry = path.join(this.dir, key);
    fs.mkdirSync(this.dir, { recursive: true });
    const staging = fs.mkdtempSync(path.join(this.dir, `.${key.slice(0, 12)}-`));
    try {
      fs.cpSync(outdir, path.join(staging, ENTRY_OUTPUT), { recursive: true });
      const out = path.join(staging, ENTRY_OUTPUT);
      const files = listFiles(out);
      if (files === undefined) throw new Error(`${outdir} holds a file that is neither a regular file nor a directory: not cached`);
      const unsealed = { format: FORMAT, key, identity, files: Object.fromEntries(files.map((f) => [f, sha256(path.join(out, f))])) };
      const record: EntryRecord = { ...unsealed, seal: sealOf(unsealed, this.secret) };
      fs.writeFileSync(path.join(staging, ENTRY_RECORD), `${JSON.stringify(record, null, 2)}\n`);
      fs.rmSync(entry, { recursive: true, force: true });
      fs.renameSync(staging, entry);
    } catch (e) {
      fs.rmSync(staging, { recursive: true, force: true });
      throw e;
    }
    this.prune(key);
    return path.join(entry, ENTRY_OUTPUT);
  }

  /** Why the entry cannot be used, or undefined when it is whole. */
  private check(entry: string, key: string): string | undefined {
    const inspected = this.inspect(entry, key);
    return typeof inspected === 'string' ? inspected : undefined;
  }

  /** The record of a whole entry, or why the entry cannot be used. */
  private inspect(entry: string, key: string): EntryRecord | string {
    let record: EntryRecord;
    try {
      record = JSON.parse(fs.readFileSync(path.join(entry, ENTRY_RECORD), 'utf8')) as EntryRecord;
    } catch (e) {
      return `${ENTRY_RECORD} unreadable: ${(e as Error).message}`;
    }
    if (record?.format !== FORMAT || record.key !== key || typeof record.files !== 'object' || record.files === null) return `${ENTRY_RECORD} is not an entry of this key and layout`;
    const identity = record.identity as Partial<SynthesisIdentity> | undefined;
    if (typeof identity?.tree !== 'string' || typeof identity.library !== 'string' || synthesisKey({ tree: identity.tree, library: identity.library }) !== key) return `${ENTRY_RECORD} records an identity of another key`;
    const { seal, ...unsealed } = record;
    const expected = sealOf(unsealed, this.secret);
    if (typeof seal !== 'string' || seal.length !== expected.length || !timingSafeEqual(Buffer.from(seal), Buffer.from(expected))) {
      return `its seal does not verify${this.secret === undefined ? '' : ` with ${SYNTH_CACHE_SECRET_VARIABLE}`} (an edited entry, or one sealed otherwise)`;
    }
    const out = path.join(entry, ENTRY_OUTPUT);
    if (!fs.existsSync(path.join(out, 'manifest.json'))) return 'no manifest.json';
    const files = listFiles(out);
    if (files === undefined) return 'a file that is neither a regular file nor a directory';
    const recorded = Object.keys(record.files).sort(compareStrings);
    if (files.join('\n') !== recorded.join('\n')) return 'its files are not the ones recorded';
    const changed = files.find((f) => sha256(path.join(out, f)) !== record.files[f]);
    return changed === undefined ? record : `${changed} differs from its recorded digest`;
  }

  /** Removes all but the {@link keep} most recently used entries (never `current`) and leftovers of interrupted stores. */
  private prune(current: string): void {
    const entries = fs
      .readdirSync(this.dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && /^[0-9a-f]{64}$/.test(e.name) && e.name !== current)
      .map((e) => {
        const record = path.join(this.dir, e.name, ENTRY_RECORD);
        return { name: e.name, used: fs.existsSync(record) ? fs.statSync(record).mtimeMs : 0 };
      })
      .sort((a, b) => b.used - a.used || compareStrings(a.name, b.name));
    for (const old of entries.slice(Math.max(0, this.keep - 1))) fs.rmSync(path.join(this.dir, old.name), { recursive: true, force: true });
    // A staging directory an hour old belongs to no store still running.
    for (const e of fs.readdirSync(this.dir, { withFileTypes: true })) {
      const staging = path.join(this.dir, e.name);
      if (e.isDirectory() && e.name.startsWith('.') && Date.now() - fs.statSync(staging).mtimeMs > 3_600_000) fs.rmSync(staging, { recursive: true, force: true });
    }
  }
}
