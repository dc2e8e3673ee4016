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
 * The temporary directory of a command's environment: its `TMPDIR` (the CLI runs with the
 * environment it is given, as the engine does), else the system's.
 */
export function temporaryDirectory(env: NodeJS.ProcessEnv): string {
  const tmp = (env.TMPDIR ?? '').trim();
  return tmp !== '' ? tmp : os.tmpdir();
}

/** Makes this process's guard directory in `tmp` ({@link temporaryDirectory}), mode 0700. */
export function makeGuardDirectory(tmp: string): string {
  return fs.mkdtempSync(path.join(tmp, `${GUARD_DIRECTORY_PREFIX}${process.pid}-`));
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
      return !stat.isDirectory() || (uid !== undefined && stat.uid !== uid);
    } catch {
      return true;
    }
  };
  const found = deadProcessLeftovers(tmp, GUARD_DIRECTORY, running, notOurs);
  if (remove) for (const dir of found) fs.rmSync(dir, { recursive: true, force: true });
  return found;
}
