import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  AppRoleCredentialsFile,
  credentialsFromEnvironment,
  CredentialsFileError,
  parseOwner,
} from '../../../lib/store/approle-credentials-file';

// The provisioned env file of spec §2.4 (SECRETSTORE_ROLE_ID, SECRETSTORE_SECRET_ID, mode 0600).

const ROLE_ID = '5f0c7a1e-0000-4000-8000-000000000001';
const SECRET_ID = '9b1e2c3d-0000-4000-8000-000000000002';

describe('AppRoleCredentialsFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-cred-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes both variables unquoted with mode 0600, whatever the umask, and leaves no temp file', () => {
    const file = new AppRoleCredentialsFile(path.join(dir, 'app.env'));
    const old = process.umask(0o000);
    try {
      file.write({ roleId: ROLE_ID, secretId: SECRET_ID });
    } finally {
      process.umask(old);
    }
    expect(fs.readFileSync(file.path, 'utf8')).toBe(`SECRETSTORE_ROLE_ID=${ROLE_ID}\nSECRETSTORE_SECRET_ID=${SECRET_ID}\n`);
    expect(fs.statSync(file.path).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual(['app.env']);
  });

  it('replaces the pair in an existing file, keeps its other lines, and makes a 0644 file 0600', () => {
    const p = path.join(dir, 'app.env');
    fs.writeFileSync(p, `# comment\nexport SECRETSTORE_SECRET_ID="old"\nAPP_PORT=8080\nSECRETSTORE_ROLE_ID='r'\n\n`, { mode: 0o644 });
    const file = new AppRoleCredentialsFile(p);
    expect(file.readSecretId()).toBe('old');
    file.write({ roleId: ROLE_ID, secretId: SECRET_ID });
    expect(fs.readFileSync(p, 'utf8')).toBe(`# comment\nAPP_PORT=8080\nSECRETSTORE_ROLE_ID=${ROLE_ID}\nSECRETSTORE_SECRET_ID=${SECRET_ID}\n`);
    expect(fs.statSync(p).mode & 0o777).toBe(0o600);
    expect(file.read()).toEqual({ roleId: ROLE_ID, secretId: SECRET_ID });
  });

  it('replaces the file by a rename: an open reader keeps the old content', () => {
    const p = path.join(dir, 'app.env');
    const file = new AppRoleCredentialsFile(p);
    file.write({ roleId: ROLE_ID, secretId: 'first-secret-id' });
    const fd = fs.openSync(p, 'r');
    const inodeBefore = fs.fstatSync(fd).ino;
    file.write({ roleId: ROLE_ID, secretId: SECRET_ID });
    expect(fs.statSync(p).ino).not.toBe(inodeBefore);
    expect(fs.readFileSync(fd, 'utf8')).toContain('first-secret-id');
    fs.closeSync(fd);
  });

  it('reads nothing from a missing file or one without the pair', () => {
    expect(new AppRoleCredentialsFile(path.join(dir, 'missing.env')).read()).toBeUndefined();
    fs.writeFileSync(path.join(dir, 'half.env'), `SECRETSTORE_ROLE_ID=${ROLE_ID}\n`);
    expect(new AppRoleCredentialsFile(path.join(dir, 'half.env')).read()).toBeUndefined();
    expect(new AppRoleCredentialsFile(path.join(dir, 'half.env')).readSecretId()).toBeUndefined();
  });

  it('refuses values that would need quoting, a missing directory and a non-file target', () => {
    const file = new AppRoleCredentialsFile(path.join(dir, 'app.env'));
    expect(() => file.write({ roleId: ROLE_ID, secretId: 'a b' })).toThrow(
      new CredentialsFileError('SECRETSTORE_SECRET_ID: the store returned a value that cannot be written unquoted'),
    );
    expect(() => new AppRoleCredentialsFile(path.join(dir, 'no', 'app.env')).write({ roleId: ROLE_ID, secretId: SECRET_ID })).toThrow(
      /cannot write .*\/no\/app\.env: the directory .*\/no does not exist/,
    );
    fs.mkdirSync(path.join(dir, 'd.env'));
    const d = path.join(dir, 'd.env');
    expect(() => new AppRoleCredentialsFile(d).write({ roleId: ROLE_ID, secretId: SECRET_ID })).toThrow(
      new CredentialsFileError(`${d} is a directory: --env-file takes the path of the env file inside it, e.g. ${d}/orchestrator.env`),
    );
  });

  it('marks a link or a directory at the path as a wrong path (a usage mistake), and other failures not', () => {
    const wrongPath = (act: () => unknown): boolean | undefined => {
      try {
        act();
      } catch (e) {
        return (e as CredentialsFileError).wrongPath;
      }
      return undefined;
    };
    const d = path.join(dir, 'd.env');
    fs.mkdirSync(d);
    const link = path.join(dir, 'link.env');
    fs.symlinkSync(path.join(dir, 'elsewhere.env'), link);
    expect(wrongPath(() => new AppRoleCredentialsFile(d).assertWritable())).toBe(true);
    expect(wrongPath(() => new AppRoleCredentialsFile(link).read())).toBe(true);
    expect(wrongPath(() => new AppRoleCredentialsFile(path.join(dir, 'no', 'app.env')).assertWritable())).toBe(false);
  });

  describe('never follows a symbolic link', () => {
    const LINK_ERROR = (p: string) =>
      new CredentialsFileError(
        `refusing ${p}: it is a symbolic link; give the path of the env file itself (a link could make the command read or write another file)`,
      );
    let target: string;
    let link: string;
    beforeEach(() => {
      target = path.join(dir, 'root-only.txt');
      fs.writeFileSync(target, 'ROOT_ONLY_SECRET=do-not-copy\n', { mode: 0o600 });
      link = path.join(dir, 'app.env');
      fs.symlinkSync(target, link);
    });

    it('reading refuses the link and reads nothing of its target', () => {
      const file = new AppRoleCredentialsFile(link);
      expect(() => file.readVariables()).toThrow(LINK_ERROR(link));
      expect(() => file.read()).toThrow(LINK_ERROR(link));
    });

    it('writing and the writability check refuse the link; the target and the link stay as they were', () => {
      const file = new AppRoleCredentialsFile(link);
      expect(() => file.assertWritable()).toThrow(LINK_ERROR(link));
      expect(() => file.write({ roleId: ROLE_ID, secretId: SECRET_ID })).toThrow(LINK_ERROR(link));
      expect(fs.readFileSync(target, 'utf8')).toBe('ROOT_ONLY_SECRET=do-not-copy\n');
      expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
      expect(fs.readdirSync(dir).sort()).toEqual(['app.env', 'root-only.txt']);
    });

    it('a dangling link is refused too (it would create the file where the link points)', () => {
      const dangling = path.join(dir, 'dangling.env');
      fs.symlinkSync(path.join(dir, 'elsewhere.env'), dangling);
      expect(() => new AppRoleCredentialsFile(dangling).write({ roleId: ROLE_ID, secretId: SECRET_ID })).toThrow(LINK_ERROR(dangling));
      expect(fs.existsSync(path.join(dir, 'elsewhere.env'))).toBe(false);
    });
  });

  it('assertWritable creates nothing, and fails before anything is issued when the directory is read-only', () => {
    const file = new AppRoleCredentialsFile(path.join(dir, 'app.env'));
    file.assertWritable();
    expect(fs.readdirSync(dir)).toEqual([]);
    if (process.getuid?.() !== 0) {
      fs.chmodSync(dir, 0o500);
      try {
        expect(() => file.assertWritable()).toThrow(new CredentialsFileError(`cannot write ${file.path} (permission denied): run as a user who may write to ${dir}`));
      } finally {
        fs.chmodSync(dir, 0o700);
      }
    }
  });

  describe('lock', () => {
    it('runs bodies one after the other, and removes the lock file', async () => {
      const file = new AppRoleCredentialsFile(path.join(dir, 'app.env'));
      const events: string[] = [];
      const body = (name: string) => async () => {
        events.push(`${name} start`);
        await new Promise((r) => setTimeout(r, 100));
        events.push(`${name} end`);
      };
      await Promise.all([file.lock(body('a')), file.lock(body('b'))]);
      expect(events).toEqual(['a start', 'a end', 'b start', 'b end']);
      expect(fs.existsSync(file.lockPath)).toBe(false);
    });

    it('replaces a lock left by a process that no longer runs', async () => {
      const file = new AppRoleCredentialsFile(path.join(dir, 'app.env'));
      // A pid above the kernel's pid_max never runs.
      fs.writeFileSync(file.lockPath, '99999999\n');
      await expect(file.lock(async () => 'ran')).resolves.toBe('ran');
      expect(fs.readdirSync(dir)).toEqual([]);
    });

    it('releases the lock when the body fails', async () => {
      const file = new AppRoleCredentialsFile(path.join(dir, 'app.env'));
      await expect(file.lock(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      expect(fs.existsSync(file.lockPath)).toBe(false);
    });
  });

  it('gives the file the requested owner (as root) or says why it cannot', () => {
    const file = new AppRoleCredentialsFile(path.join(dir, 'app.env'));
    if (process.getuid?.() === 0) {
      expect(file.write({ roleId: ROLE_ID, secretId: SECRET_ID }, { uid: 65534, gid: 65534 })).toEqual({ uid: 65534, gid: 65534 });
      // Without --owner, a rewrite keeps the existing owner.
      expect(file.write({ roleId: ROLE_ID, secretId: SECRET_ID })).toEqual({ uid: 65534, gid: 65534 });
    } else {
      expect(() => file.write({ roleId: ROLE_ID, secretId: SECRET_ID }, { uid: 0, gid: 0 })).toThrow(/cannot give .* the owner 0:0 \(EPERM\): run as root, or omit --owner/);
      expect(fs.existsSync(file.path)).toBe(false);
    }
  });

  describe('refuses a directory another user could change the file in', () => {
    const write = (file: AppRoleCredentialsFile) => () => file.write({ roleId: ROLE_ID, secretId: SECRET_ID });
    const lock = (file: AppRoleCredentialsFile) => file.lock(async () => 'locked');

    it.each([
      ['writable by others', 0o777, '0777'],
      ['writable by group', 0o770, '0770'],
    ])('%s without the sticky bit: nothing is written, the message names the directory', async (_why, mode, shown) => {
      const open = path.join(dir, 'open');
      fs.mkdirSync(open);
      fs.chmodSync(open, mode);
      const file = new AppRoleCredentialsFile(path.join(open, 'app.env'));
      const message =
        `refusing ${file.path}: its directory ${open} is writable by group or others without the sticky bit (mode ${shown}), ` +
        `so another user could replace the env file; make it writable by its owner only (chmod go-w ${open}) or use another directory`;
      expect(() => file.assertWritable()).toThrow(new CredentialsFileError(message));
      expect(write(file)).toThrow(new CredentialsFileError(message));
      await expect(lock(file)).rejects.toThrow(new CredentialsFileError(message));
      expect(fs.readdirSync(open)).toEqual([]);
    });

    it('a shared directory with the sticky bit (as /tmp) is allowed', async () => {
      const shared = path.join(dir, 'shared');
      fs.mkdirSync(shared);
      fs.chmodSync(shared, 0o1777);
      const file = new AppRoleCredentialsFile(path.join(shared, 'app.env'));
      file.assertWritable();
      await expect(lock(file)).resolves.toBe('locked');
      write(file)();
      expect(file.read()).toEqual({ roleId: ROLE_ID, secretId: SECRET_ID });
    });

    it('a parent directory that is a link is checked where it leads, and named both ways', () => {
      const open = path.join(dir, 'open');
      fs.mkdirSync(open);
      fs.chmodSync(open, 0o777);
      const linked = path.join(dir, 'linked');
      fs.symlinkSync(open, linked);
      const file = new AppRoleCredentialsFile(path.join(linked, 'app.env'));
      expect(() => file.assertWritable()).toThrow(`refusing ${file.path}: its directory ${linked} (a link to ${open}) is writable by group or others`);
      // A link to a safe directory is followed as before.
      fs.chmodSync(open, 0o700);
      expect(() => file.assertWritable()).not.toThrow();
    });

    it('a directory owned by another user than the current one and root', () => {
      const theirs = path.join(dir, 'theirs');
      fs.mkdirSync(theirs, { mode: 0o755 });
      const file = new AppRoleCredentialsFile(path.join(theirs, 'app.env'));
      if (process.getuid?.() === 0) {
        fs.chownSync(theirs, 65534, 65534);
        expect(() => file.assertWritable()).toThrow(
          new CredentialsFileError(
            `refusing ${file.path}: its directory ${theirs} is owned by uid 65534, neither you (uid 0) nor root, so that user could replace the env file; ` +
              'use a directory owned by you or root',
          ),
        );
        expect(write(file)).toThrow(/is owned by uid 65534, neither you \(uid 0\) nor root/);
        // Owned by root again: allowed.
        fs.chownSync(theirs, 0, 0);
      }
      expect(() => file.assertWritable()).not.toThrow();
    });
  });
});

describe('parseOwner', () => {
  it('takes numbers, names, and a user alone as user plus primary group', () => {
    expect(parseOwner('1000:1001')).toEqual({ uid: 1000, gid: 1001 });
    expect(parseOwner('root')).toEqual({ uid: 0, gid: 0 });
    expect(parseOwner('root:root')).toEqual({ uid: 0, gid: 0 });
    expect(parseOwner('0')).toEqual({ uid: 0, gid: 0 });
  });

  it('names what is wrong', () => {
    expect(() => parseOwner('no-such-user-x')).toThrow('--owner: no user "no-such-user-x" in /etc/passwd');
    expect(() => parseOwner('root:no-such-group-x')).toThrow('--owner: no group "no-such-group-x" in /etc/group');
    expect(() => parseOwner('a:b:c')).toThrow('--owner "a:b:c" is not USER[:GROUP]');
    expect(() => parseOwner('root:')).toThrow('is not USER[:GROUP]');
  });
});

describe('credentialsFromEnvironment', () => {
  it('needs both variables', () => {
    expect(credentialsFromEnvironment({ SECRETSTORE_ROLE_ID: ROLE_ID, SECRETSTORE_SECRET_ID: SECRET_ID })).toEqual({ roleId: ROLE_ID, secretId: SECRET_ID });
    expect(credentialsFromEnvironment({ SECRETSTORE_ROLE_ID: ROLE_ID, SECRETSTORE_SECRET_ID: ' ' })).toBeUndefined();
  });
});
