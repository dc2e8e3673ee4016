import * as fs from 'fs';
import * as path from 'path';
import { processRunning } from './process-running';

/**
 * The entries of `dir` that a killed run left behind: those whose name `pattern` matches with the
 * owner's pid as its first group, and whose process no longer runs (a SIGKILL, a cancelled CI job:
 * the run could not remove them). Paths, sorted; an unreadable `dir` has none. `keep` can pass over
 * more (another user's entry). The pid in the name is what tells a leftover from the entry of a run
 * still going: the guards' directories, adopt's check directories and the `.writing-<pid>` files.
 */
export function deadProcessLeftovers(
  dir: string,
  pattern: RegExp,
  running: (pid: number) => boolean = processRunning,
  keep: (file: string) => boolean = () => false,
): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => {
      const pid = pattern.exec(name)?.[1];
      return pid !== undefined && !running(Number(pid)) && !keep(path.join(dir, name));
    })
    .sort()
    .map((name) => path.join(dir, name));
}
