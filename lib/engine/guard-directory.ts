import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { processRunning } from '../private/process-running';
import { deadProcessLeftovers } from '../private/dead-process-leftovers';

/**
 * Where the guards keep the plan they review: a temporary directory named after the process that
 * owns it (`<tmp>/secretstore-iac-guard-<pid>-XXXXXX`). A run killed mid-guard (SIGKILL, a cancelled
 * CI job) cannot remove it; the pid in the name lets the next `tf` or `adopt` tell such a leftover
 * from the directory of a run still going, and remove only the first.
 */
export const GUARD_DIRECTORY_PREFIX = 'secretstore-iac-guard-';

const GUARD_DIRECTORY = /^secretstore-iac-guard-(\d+)-/;

/**
 * The file a guard directory is made with, naming its owner's pid: only a directory holding it, with
 * the pid of its name, is ever removed as a leftover. The name alone is not enough: another tool's
 * (or a test's) temporary directory `secretstore-iac-guard-403-abc123` matches the pattern too, and
 * was removed by the first version of this clean-up.
 */
export const GUARD_OWNER_FILE = '.secretstore-iac-guard-owner';

/**
 * The temporary directory of a command's environment: its `TMPDIR` (the CLI runs with the
 * environment it is given, as the engine does), else the system's.
 */
export function temporaryDirectory(env: NodeJS.ProcessEnv): string {
  const tmp = (env.TMPDIR ?? '').trim();
  return tmp !== '' ? tmp : os.tmpdir();
}

/** Makes this process's guard directory in `tmp` ({@link temporaryDirectory}), mode 0700. */
export function makeGuardDirectory(tmp: string): string {
  const dir = fs.mkdtempSync(path.join(tmp, `${GUARD_DIRECTORY_PREFIX}${process.pid}-`));
  fs.writeFileSync(path.join(dir, GUARD_OWNER_FILE), `${process.pid}\n`, { mode: 0o600 });
  return dir;
}

/**
 * The guard directories in `tmp` whose process no longer runs, sorted; with `remove`, deletes them.
 * Only this user's: another user's leftover is theirs to remove (and the system's temporary
 * directory does not let this user delete it).
 */
export function removeGuardDirectoryLeftovers(remove: boolean, tmp: string, running: (pid: number) => boolean = processRunning): string[] {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const notOurs = (file: string) => {
    try {
      const stat = fs.lstatSync(file);
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) return true;
      // Made by makeGuardDirectory: its owner file names the pid its name carries.
      return fs.readFileSync(path.join(file, GUARD_OWNER_FILE), 'utf8').trim() !== GUARD_DIRECTORY.exec(path.basename(file))?.[1];
    } catch {
      return true;
    }
  };
  const found = deadProcessLeftovers(tmp, GUARD_DIRECTORY, running, notOurs);
  if (remove) for (const dir of found) fs.rmSync(dir, { recursive: true, force: true });
  return found;
}
