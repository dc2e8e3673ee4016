import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { fileErrorText } from '../private/file-error-text';

/** Variable of the Role ID in the provisioned environment file (spec §2.4). */
export const ROLE_ID_VARIABLE = 'SECRETSTORE_ROLE_ID';
/** Variable of the Secret ID in the provisioned environment file (spec §2.4). */
export const SECRET_ID_VARIABLE = 'SECRETSTORE_SECRET_ID';

/** A Role ID and Secret ID pair. */
export interface AppRoleCredentials {
  readonly roleId: string;
  readonly secretId: string;
}

/** Numeric owner of a file. */
export interface FileOwner {
  readonly uid: number;
  readonly gid: number;
}

/** Raised for unusable credentials files and owners; the message names the file and the fix. */
export class CredentialsFileError extends Error {
  /**
   * True when the path given is itself the mistake (a symbolic link, a directory, another non-file):
   * the commands report it as a usage error (exit 2), not as a failure to act.
   */
  readonly wrongPath: boolean;

  constructor(message: string, wrongPath = false) {
    super(message);
    this.name = 'CredentialsFileError';
    this.wrongPath = wrongPath;
  }
}

// Store-generated IDs are UUIDs; anything outside this set would need quoting, which `docker --env-file`
// does not undo.
const ID_PATTERN = /^[A-Za-z0-9._~+/=:-]+$/;
const LINE_PATTERN = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/;

function unquote(value: string): string {
  const m = /^'(.*)'$/.exec(value) ?? /^"(.*)"$/.exec(value);
  return m ? m[1] : value;
}

/** The `name:x:id:...` rows of /etc/passwd or /etc/group, split on `:` (none if unreadable). */
function databaseRows(file: string): string[][] {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .map((line) => line.split(':'))
      .filter((fields) => fields.length > 3);
  } catch {
    return [];
  }
}

/**
 * Parses `USER[:GROUP]` (names from /etc/passwd and /etc/group, or numbers). A user alone means the
 * user's primary group.
 * @throws CredentialsFileError for unknown names
 */
export function parseOwner(text: string): FileOwner {
  const [user, group, ...rest] = text.split(':');
  if (!user || rest.length > 0 || group === '') {
    throw new CredentialsFileError(`--owner "${text}" is not USER[:GROUP] (names or numeric ids, e.g. orchestrator:orchestrator or 1000:1000)`);
  }
  const numeric = /^\d+$/.test(user);
  const passwd = databaseRows('/etc/passwd').find((f) => (numeric ? f[2] === user : f[0] === user));
  if (!numeric && !passwd) throw new CredentialsFileError(`--owner: no user "${user}" in /etc/passwd`);
  const uid = numeric ? Number(user) : Number(passwd![2]);
  if (group === undefined) {
    if (!passwd) throw new CredentialsFileError(`--owner: uid ${user} has no entry in /etc/passwd: give the group too (UID:GID)`);
    return { uid, gid: Number(passwd[3]) };
  }
  if (/^\d+$/.test(group)) return { uid, gid: Number(group) };
  const entry = databaseRows('/etc/group').find((f) => f[0] === group);
  if (!entry) throw new CredentialsFileError(`--owner: no group "${group}" in /etc/group`);
  return { uid, gid: Number(entry[2]) };
}

/**
 * The pair from `SECRETSTORE_ROLE_ID` / `SECRETSTORE_SECRET_ID` in an environment, or undefined when
 * either is unset.
 */
export function credentialsFromEnvironment(env: NodeJS.ProcessEnv = process.env): AppRoleCredentials | undefined {
  const roleId = (env[ROLE_ID_VARIABLE] ?? '').trim();
  const secretId = (env[SECRET_ID_VARIABLE] ?? '').trim();
  return roleId && secretId ? { roleId, secretId } : undefined;
}

/** The sticky bit of a directory's mode: only a file's owner may remove or rename it (as in /tmp). */
const STICKY_BIT = 0o1000;

/** Flags of every open of the env file: never through a symbolic link. */
const NO_FOLLOW = fs.constants.O_NOFOLLOW;

/** How long a command waits for another one's lock before giving up. */
const LOCK_WAIT_MS = 30_000;
/** A lock older than this whose process cannot be checked is taken as left behind. */
const STALE_LOCK_MS = 10 * 60_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** True when a process with this id runs (or runs under another user). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The provisioned environment file of an application host (spec §2.4, `/opt/{org}/orchestrator.env`):
 * `SECRETSTORE_ROLE_ID=<id>` and `SECRETSTORE_SECRET_ID=<id>` lines, unquoted (the IDs need no quoting,
 * and `docker --env-file` would keep quotes as part of the value), mode 0600. Other lines of an
 * existing file are kept as they are.
 *
 * The file is never opened through a symbolic link (a link would let whoever placed it read another
 * file's content into the new one, or have it written elsewhere): reads open it with `O_NOFOLLOW`,
 * writes create a temporary file in the same directory with `O_EXCL`, flush it and rename it over
 * the target. Commands that change the file hold {@link lock} so that two of them never interleave.
 */
export class AppRoleCredentialsFile {
  /** Absolute path. */
  readonly path: string;

  constructor(file: string) {
    this.path = path.resolve(file);
  }

  /** The lock file next to the env file. */
  get lockPath(): string {
    return `${this.path}.lock`;
  }

  /** What is at the path, without following a link: undefined when nothing is. */
  private lstat(): fs.Stats | undefined {
    try {
      return fs.lstatSync(this.path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      if (code === 'ENOTDIR') throw new CredentialsFileError(`cannot use ${this.path}: a part of its directory is not a directory`);
      throw new CredentialsFileError(`cannot read ${this.path} (${fileErrorText(e)}): run as the file's owner or as root`, true);
    }
  }

  /** Refuses a path that is a link, a directory or another non-file. */
  private refuseNonFile(st: fs.Stats | undefined): void {
    if (!st) return;
    if (st.isSymbolicLink()) {
      throw new CredentialsFileError(
        `refusing ${this.path}: it is a symbolic link; give the path of the env file itself (a link could make the command read or write another file)`,
        true,
      );
    }
    if (st.isDirectory()) {
      throw new CredentialsFileError(
        `${this.path} is a directory: --env-file takes the path of the env file inside it, e.g. ${path.join(this.path, 'orchestrator.env')}`,
        true,
      );
    }
    if (!st.isFile()) throw new CredentialsFileError(`cannot use ${this.path}: it is not a regular file`, true);
  }

  /**
   * Refuses a directory another user could change the env file in (the classic safe-directory
   * check): one writable by group or others without the sticky bit, or owned by a user other than
   * the current one and root. Such a user could replace the file between the write and its use, or
   * have swapped the directory for a link: it is checked where it leads (`stat` follows it).
   */
  private refuseUnsafeDirectory(dir: string): void {
    let st: fs.Stats;
    try {
      st = fs.statSync(dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new CredentialsFileError(`cannot write ${this.path}: the directory ${dir} does not exist`);
      throw new CredentialsFileError(`cannot use ${this.path}: cannot inspect its directory ${dir} (${fileErrorText(e)})`);
    }
    if (!st.isDirectory()) throw new CredentialsFileError(`cannot use ${this.path}: ${dir} is not a directory`);
    let real = dir;
    try {
      real = fs.realpathSync(dir);
    } catch {
      /* named as given */
    }
    const named = real === dir ? `its directory ${dir}` : `its directory ${dir} (a link to ${real})`;
    const otherWritable = (st.mode & 0o022) !== 0 && (st.mode & STICKY_BIT) === 0;
    if (otherWritable) {
      throw new CredentialsFileError(
        `refusing ${this.path}: ${named} is writable by group or others without the sticky bit (mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}), ` +
          `so another user could replace the env file; make it writable by its owner only (chmod go-w ${real}) or use another directory`,
      );
    }
    const me = process.getuid?.();
    if (me !== undefined && st.uid !== 0 && st.uid !== me) {
      throw new CredentialsFileError(
        `refusing ${this.path}: ${named} is owned by uid ${st.uid}, neither you (uid ${me}) nor root, so that user could replace the env file; ` +
          'use a directory owned by you or root',
      );
    }
  }

  /** The file's text, read without following a link, or undefined when it does not exist. */
  private readText(): string | undefined {
    this.refuseNonFile(this.lstat());
    let fd: number;
    try {
      fd = fs.openSync(this.path, fs.constants.O_RDONLY | NO_FOLLOW);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      if (code === 'ELOOP') this.refuseNonFile(fs.lstatSync(this.path));
      throw new CredentialsFileError(`cannot read ${this.path} (${fileErrorText(e)}): run as the file's owner or as root`, true);
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) this.refuseNonFile(st);
      return fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  }

  /** The variables of the file, or undefined when it does not exist. */
  readVariables(): Map<string, string> | undefined {
    const text = this.readText();
    if (text === undefined) return undefined;
    const vars = new Map<string, string>();
    for (const line of text.split('\n')) {
      const m = LINE_PATTERN.exec(line);
      if (m && !line.trimStart().startsWith('#')) vars.set(m[1], unquote(m[2]));
    }
    return vars;
  }

  /** The pair in the file; undefined when the file does not exist or lacks either variable. */
  read(): AppRoleCredentials | undefined {
    const vars = this.readVariables();
    const roleId = vars?.get(ROLE_ID_VARIABLE);
    const secretId = vars?.get(SECRET_ID_VARIABLE);
    return roleId && secretId ? { roleId, secretId } : undefined;
  }

  /** The Secret ID in the file, if any. */
  readSecretId(): string | undefined {
    return this.readVariables()?.get(SECRET_ID_VARIABLE) || undefined;
  }

  /**
   * Checks, before anything is asked of the store, that {@link write} can succeed: the target is
   * no link, directory or other non-file, an existing file is readable, and a file with the owner
   * can be created in the directory (by creating and removing one).
   * @throws CredentialsFileError naming the file and the fix
   */
  assertWritable(owner?: FileOwner): void {
    const dir = path.dirname(this.path);
    if (!fs.existsSync(dir)) throw new CredentialsFileError(`cannot write ${this.path}: the directory ${dir} does not exist`);
    this.refuseUnsafeDirectory(dir);
    const existing = this.lstat();
    this.refuseNonFile(existing);
    if (existing) this.readText();
    const target = owner ?? (existing ? { uid: existing.uid, gid: existing.gid } : undefined);
    this.withTempFile((fd) => this.giveOwner(fd, target));
  }

  /**
   * Creates a temporary file (mode 0600, `O_EXCL`, no link followed) in the file's directory, runs
   * `use` on it, and removes it unless `use` returns true (it was renamed into place).
   */
  private withTempFile(use: (fd: number, temp: string) => boolean | void): void {
    const dir = path.dirname(this.path);
    const temp = path.join(dir, `.${path.basename(this.path)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`);
    let fd: number | undefined;
    let kept = false;
    try {
      fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | NO_FOLLOW, 0o600);
      fs.fchmodSync(fd, 0o600);
      kept = use(fd, temp) === true;
    } catch (e) {
      if (e instanceof CredentialsFileError) throw e;
      throw new CredentialsFileError(`cannot write ${this.path} (${fileErrorText(e)}): run as a user who may write to ${dir}`);
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
      if (!kept) fs.rmSync(temp, { force: true });
    }
  }

  private giveOwner(fd: number, target: FileOwner | undefined): void {
    if (!target) return;
    try {
      fs.fchownSync(fd, target.uid, target.gid);
    } catch (e) {
      const st = fs.fstatSync(fd);
      if (st.uid !== target.uid || st.gid !== target.gid) {
        throw new CredentialsFileError(
          `cannot give ${this.path} the owner ${target.uid}:${target.gid} (${(e as NodeJS.ErrnoException).code}): run as root, or omit --owner`,
        );
      }
    }
  }

  /**
   * Writes the pair atomically: a new file with mode 0600 next to the target, flushed, given its
   * owner, then renamed over the target, and the directory flushed. Readers see the old file or the
   * new one, never a part. A symbolic link at the path is refused, never followed.
   * @param owner the file's owner; default: the existing file's owner, else the current user
   * @returns the owner the file has
   */
  write(credentials: AppRoleCredentials, owner?: FileOwner): FileOwner {
    for (const [name, value] of [
      [ROLE_ID_VARIABLE, credentials.roleId],
      [SECRET_ID_VARIABLE, credentials.secretId],
    ] as const) {
      if (!ID_PATTERN.test(value)) throw new CredentialsFileError(`${name}: the store returned a value that cannot be written unquoted`);
    }
    const dir = path.dirname(this.path);
    if (!fs.existsSync(dir)) throw new CredentialsFileError(`cannot write ${this.path}: the directory ${dir} does not exist`);
    this.refuseUnsafeDirectory(dir);
    const existing = this.lstat();
    this.refuseNonFile(existing);
    const target = owner ?? (existing ? { uid: existing.uid, gid: existing.gid } : undefined);

    const kept: string[] = [];
    const text = existing ? this.readText() : undefined;
    if (text !== undefined) {
      for (const line of text.split('\n')) {
        const m = LINE_PATTERN.exec(line);
        if (m && (m[1] === ROLE_ID_VARIABLE || m[1] === SECRET_ID_VARIABLE) && !line.trimStart().startsWith('#')) continue;
        kept.push(line);
      }
      while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop();
    }
    const content = [...kept, `${ROLE_ID_VARIABLE}=${credentials.roleId}`, `${SECRET_ID_VARIABLE}=${credentials.secretId}`, ''].join('\n');

    this.withTempFile((fd, temp) => {
      fs.writeSync(fd, content);
      fs.fsyncSync(fd);
      this.giveOwner(fd, target);
      // rename() replaces a link at the path by the file; it never writes through it.
      fs.renameSync(temp, this.path);
      return true;
    });
    try {
      const dfd = fs.openSync(dir, 'r');
      fs.fsyncSync(dfd);
      fs.closeSync(dfd);
    } catch {
      /* directory fsync is best effort */
    }
    const st = fs.lstatSync(this.path);
    return { uid: st.uid, gid: st.gid };
  }

  /**
   * Runs `body` holding the file's lock: `<path>.lock`, created with `O_EXCL` and holding the
   * holder's pid. Another holder is waited for (up to 30 s); a lock whose process no longer runs, or
   * older than 10 minutes, is taken as left behind by a killed command and replaced.
   * @throws CredentialsFileError when the lock stays held or cannot be created
   */
  async lock<T>(body: () => Promise<T>): Promise<T> {
    const dir = path.dirname(this.path);
    if (!fs.existsSync(dir)) throw new CredentialsFileError(`cannot write ${this.path}: the directory ${dir} does not exist`);
    this.refuseUnsafeDirectory(dir);
    this.refuseNonFile(this.lstat());
    const deadline = Date.now() + LOCK_WAIT_MS;
    let fd: number | undefined;
    for (;;) {
      try {
        fd = fs.openSync(this.lockPath, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | NO_FOLLOW, 0o600);
        fs.writeSync(fd, `${process.pid}\n`);
        break;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST') {
          throw new CredentialsFileError(`cannot create the lock ${this.lockPath} (${fileErrorText(e)}): run as a user who may write to ${path.dirname(this.path)}`);
        }
      }
      const holder = this.lockHolder();
      if (holder.stale) {
        // Rename first, so that of two commands seeing the same stale lock only one removes it.
        const aside = `${this.lockPath}.stale-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
        try {
          fs.renameSync(this.lockPath, aside);
          fs.rmSync(aside, { force: true });
        } catch {
          /* another command took it first */
        }
        continue;
      }
      if (Date.now() > deadline) {
        throw new CredentialsFileError(
          `${this.lockPath} is held by process ${holder.pid ?? 'unknown'}: another command is changing ${this.path}; wait for it, or remove the lock file if no such process runs`,
        );
      }
      await sleep(50 + Math.floor(Math.random() * 50));
    }
    try {
      return await body();
    } finally {
      fs.closeSync(fd);
      fs.rmSync(this.lockPath, { force: true });
    }
  }

  private lockHolder(): { pid?: number; stale: boolean } {
    try {
      const st = fs.lstatSync(this.lockPath);
      if (!st.isFile()) return { stale: false };
      const pid = Number(fs.readFileSync(this.lockPath, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0) return { pid, stale: !processRuns(pid) };
      // Created but not written yet, or unreadable: stale only when old.
      return { stale: Date.now() - st.mtimeMs > STALE_LOCK_MS };
    } catch {
      return { stale: false };
    }
  }
}
