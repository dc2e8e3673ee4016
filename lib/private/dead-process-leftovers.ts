import * as fs from 'fs';
import * as path from 'path';
import { processRunning } from './process-running';

/**
 * The entries of `dir` that a killed run left behind: those whose name `pattern` matches with the
 * owner's pid as its first group, and whose process no longer runs (a SIGKILL, a cancelled CI job:
 * the run could not remove them). Paths, sorted; an unreadable `dir` has none. `keep` can pass over
 * more (another user's entry). The pid in the name is what tells a leftover from the entry of a run
 * still going: the guards' directories, adopt's check directories, the `.writing-<pid>` files and
 * the temporary directories of ref syntheses ({@link removeOwnedDirectoryLeftovers}).
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

/**
 * A kind of temporary directory a run owns: `<tmp>/<prefix><pid>-XXXXXX`, made with `ownerFile`
 * inside naming the pid ({@link makeOwnedDirectory}), so that a run killed before removing it
 * (SIGKILL, a cancelled CI job) leaves something the next run can tell apart from another tool's
 * (or a test's) directory whose name merely looks the same.
 */
export interface OwnedDirectoryKind {
  /** The name's start, before the pid (`secretstore-iac-guard-`). */
  readonly prefix: string;
  /** The file inside naming the owner's pid (`.secretstore-iac-guard-owner`). */
  readonly ownerFile: string;
}

/** Makes this process's directory of `kind` in `tmp`, mode 0700, with its owner file. */
export function makeOwnedDirectory(tmp: string, kind: OwnedDirectoryKind): string {
  const dir = fs.mkdtempSync(path.join(tmp, `${kind.prefix}${process.pid}-`));
  fs.writeFileSync(path.join(dir, kind.ownerFile), `${process.pid}\n`, { mode: 0o600 });
  return dir;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The directories of `kind` in `tmp` whose process no longer runs, sorted; with `remove`, deletes
 * them. Only a directory (not a link) of this user holding the owner file that names the pid of its
 * name: the name alone matched a test fixture's temporary directory (`secretstore-iac-guard-403-abc123`),
 * which the first version of this clean-up removed. Another user's leftover is theirs to remove.
 */
export function removeOwnedDirectoryLeftovers(
  remove: boolean,
  tmp: string,
  kind: OwnedDirectoryKind,
  running: (pid: number) => boolean = processRunning,
): string[] {
  const pattern = new RegExp(`^${escapeRegExp(kind.prefix)}(\\d+)-`);
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const notOurs = (file: string) => {
    try {
      const stat = fs.lstatSync(file);
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) return true;
      return fs.readFileSync(path.join(file, kind.ownerFile), 'utf8').trim() !== pattern.exec(path.basename(file))?.[1];
    } catch {
      return true;
    }
  };
  const found = deadProcessLeftovers(tmp, pattern, running, notOurs);
  if (remove) for (const dir of found) fs.rmSync(dir, { recursive: true, force: true });
  return found;
}
