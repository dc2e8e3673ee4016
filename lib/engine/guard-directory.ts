import * as os from 'os';
import { processRunning } from '../private/process-running';
import { makeOwnedDirectory, OwnedDirectoryKind, removeOwnedDirectoryLeftovers } from '../private/dead-process-leftovers';

/**
 * Where the guards keep the plan they review: a temporary directory named after the process that
 * owns it (`<tmp>/secretstore-iac-guard-<pid>-XXXXXX`). A run killed mid-guard (SIGKILL, a cancelled
 * CI job) cannot remove it; the pid in the name lets the next `tf` or `adopt` tell such a leftover
 * from the directory of a run still going, and remove only the first.
 */
export const GUARD_DIRECTORY_PREFIX = 'secretstore-iac-guard-';

/**
 * The file a guard directory is made with, naming its owner's pid: only a directory holding it, with
 * the pid of its name, is ever removed as a leftover. The name alone is not enough: another tool's
 * (or a test's) temporary directory `secretstore-iac-guard-403-abc123` matches the pattern too, and
 * was removed by the first version of this clean-up.
 */
export const GUARD_OWNER_FILE = '.secretstore-iac-guard-owner';

const GUARD_DIRECTORY: OwnedDirectoryKind = { prefix: GUARD_DIRECTORY_PREFIX, ownerFile: GUARD_OWNER_FILE };

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
  return makeOwnedDirectory(tmp, GUARD_DIRECTORY);
}

/**
 * The guard directories in `tmp` whose process no longer runs, sorted; with `remove`, deletes them.
 * Only this user's: another user's leftover is theirs to remove (and the system's temporary
 * directory does not let this user delete it).
 */
export function removeGuardDirectoryLeftovers(remove: boolean, tmp: string, running: (pid: number) => boolean = processRunning): string[] {
  return removeOwnedDirectoryLeftovers(remove, tmp, GUARD_DIRECTORY, running);
}
