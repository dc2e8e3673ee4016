import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

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
  constructor(message: string) {
    super(message);
    this.name = 'CredentialsFileError';
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

/**
 * The provisioned environment file of an application host (spec §2.4, `/opt/{org}/orchestrator.env`):
 * `SECRETSTORE_ROLE_ID=<id>` and `SECRETSTORE_SECRET_ID=<id>` lines, unquoted (the IDs need no quoting,
 * and `docker --env-file` would keep quotes as part of the value), mode 0600. Other lines of an
 * existing file are kept as they are.
 */
export class AppRoleCredentialsFile {
  /** Absolute path. */
  readonly path: string;

  constructor(file: string) {
    this.path = path.resolve(file);
  }

  /** The variables of the file, or undefined when it does not exist. */
  readVariables(): Map<string, string> | undefined {
    let text: string;
    try {
      text = fs.readFileSync(this.path, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      throw new CredentialsFileError(`cannot read ${this.path} (${code}): run as the file's owner or as root`);
    }
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
   * Writes the pair atomically: a new file with mode 0600 next to the target, flushed, given its
   * owner, then renamed over the target. Readers see the old file or the new one, never a part.
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
    let existing: fs.Stats | undefined;
    try {
      existing = fs.statSync(this.path);
    } catch {
      existing = undefined;
    }
    if (existing && !existing.isFile()) throw new CredentialsFileError(`cannot write ${this.path}: it is not a regular file`);
    const target = owner ?? (existing ? { uid: existing.uid, gid: existing.gid } : undefined);

    const kept: string[] = [];
    if (existing) {
      const text = fs.readFileSync(this.path, 'utf8');
      for (const line of text.split('\n')) {
        const m = LINE_PATTERN.exec(line);
        if (m && (m[1] === ROLE_ID_VARIABLE || m[1] === SECRET_ID_VARIABLE) && !line.trimStart().startsWith('#')) continue;
        kept.push(line);
      }
      while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop();
    }
    const content = [...kept, `${ROLE_ID_VARIABLE}=${credentials.roleId}`, `${SECRET_ID_VARIABLE}=${credentials.secretId}`, ''].join('\n');

    const temp = path.join(dir, `.${path.basename(this.path)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`);
    let fd: number | undefined;
    try {
      fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
      fs.fchmodSync(fd, 0o600);
      fs.writeSync(fd, content);
      fs.fsyncSync(fd);
      if (target) {
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
      fs.closeSync(fd);
      fd = undefined;
      fs.renameSync(temp, this.path);
    } catch (e) {
      if (fd !== undefined) fs.closeSync(fd);
      fs.rmSync(temp, { force: true });
      if (e instanceof CredentialsFileError) throw e;
      const code = (e as NodeJS.ErrnoException).code;
      throw new CredentialsFileError(`cannot write ${this.path} (${code}): run as a user who may write to ${dir}`);
    }
    try {
      const dfd = fs.openSync(dir, 'r');
      fs.fsyncSync(dfd);
      fs.closeSync(dfd);
    } catch {
      /* directory fsync is best effort */
    }
    const st = fs.statSync(this.path);
    return { uid: st.uid, gid: st.gid };
  }
}
