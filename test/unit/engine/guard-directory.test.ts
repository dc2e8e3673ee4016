import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { GUARD_DIRECTORY_PREFIX, GUARD_OWNER_FILE, makeGuardDirectory, removeGuardDirectoryLeftovers, temporaryDirectory } from '../../../lib/engine/guard-directory';

// Issue 27: a `tf --refuse-replace` killed during its guard leaves the directory of the plan it
// reviews; the next `tf` or `adopt` removes it, and only those whose process no longer runs.
// Killing a guarded run with SIGKILL on a real store: test/store/fix-texts.store.test.ts.

/** A pid no process has (the highest a Linux kernel hands out, plus one). */
const DEAD = 4194305;

describe('guard directories of killed runs', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-guard-dirs-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('the guard directory is named after the process that owns it, mode 0700', () => {
    const dir = makeGuardDirectory(tmp);
    expect(path.basename(dir)).toMatch(new RegExp(`^${GUARD_DIRECTORY_PREFIX}${process.pid}-.{6}$`));
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('a dead process\'s directory is found (and removed only when asked), with what it holds; a running one\'s (this process) is kept', () => {
    const dead = path.join(tmp, `${GUARD_DIRECTORY_PREFIX}${DEAD}-a1B2c3`);
    fs.mkdirSync(dead);
    fs.writeFileSync(path.join(dead, GUARD_OWNER_FILE), `${DEAD}\n`);
    fs.writeFileSync(path.join(dead, 'guard.tfplan'), 'plan');
    const mine = makeGuardDirectory(tmp);
    // Not a guard directory of this version (no pid in its name), and a file: never touched.
    fs.mkdirSync(path.join(tmp, `${GUARD_DIRECTORY_PREFIX}Xy12ab`));
    fs.writeFileSync(path.join(tmp, `${GUARD_DIRECTORY_PREFIX}${DEAD}-file`), '');
    expect(removeGuardDirectoryLeftovers(false, tmp)).toEqual([dead]);
    expect(fs.existsSync(dead)).toBe(true);
    expect(removeGuardDirectoryLeftovers(true, tmp)).toEqual([dead]);
    expect(fs.existsSync(dead)).toBe(false);
    expect(fs.existsSync(mine)).toBe(true);
    expect(fs.readdirSync(tmp).sort()).toEqual([path.basename(mine), `${GUARD_DIRECTORY_PREFIX}${DEAD}-file`, `${GUARD_DIRECTORY_PREFIX}Xy12ab`].sort());
  });

  it('the temporary directory is the one of the environment the command is given (TMPDIR), else the system\'s', () => {
    expect(temporaryDirectory({ TMPDIR: tmp })).toBe(tmp);
    expect(temporaryDirectory({ TMPDIR: ' ' })).toBe(os.tmpdir());
    expect(temporaryDirectory({})).toBe(os.tmpdir());
  });

  it('a pid that reads as running (a reused pid) keeps its directory', () => {
    const dir = path.join(tmp, `${GUARD_DIRECTORY_PREFIX}${DEAD}-zzzzzz`);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, GUARD_OWNER_FILE), `${DEAD}\n`);
    expect(removeGuardDirectoryLeftovers(true, tmp, () => true)).toEqual([]);
    expect(fs.existsSync(dir)).toBe(true);
  });

  it('a directory whose name matches but that no guard made (no owner file, or another pid in it) is never removed: a test fixture `secretstore-iac-guard-403-abc123` was', () => {
    const foreign = path.join(tmp, `${GUARD_DIRECTORY_PREFIX}403-abc123`);
    fs.mkdirSync(foreign);
    fs.writeFileSync(path.join(foreign, 'cdk.tf.json'), '{}');
    const otherPid = path.join(tmp, `${GUARD_DIRECTORY_PREFIX}${DEAD}-qwerty`);
    fs.mkdirSync(otherPid);
    fs.writeFileSync(path.join(otherPid, GUARD_OWNER_FILE), '12345\n');
    expect(removeGuardDirectoryLeftovers(true, tmp)).toEqual([]);
    expect(fs.existsSync(path.join(foreign, 'cdk.tf.json'))).toBe(true);
    expect(fs.existsSync(otherPid)).toBe(true);
  });
});
