import * as fs from 'fs';
import * as path from 'path';
import { IMPORT_FILE } from '../reconcile/import-blocks';
import { processRunning } from '../private/atomic-file';
import { deadProcessLeftovers } from '../private/dead-process-leftovers';
import { SEAL_FILE, sealBookkeeping } from '../engine/bookkeeping-seal';

/**
 * Where adopt's plan check runs: a directory adopt owns beside the stack directory
 * (`<outdir>/stacks/.adopt-check-<pid>-<stack>`), holding links to every file of the stack
 * directory (its configuration, `.terraform/`, the lock file, a local state), the new import
 * file, and a copy of the stack's bookkeeping seal that records it (engine runs verify the seal). The check plans there, so the stack directory itself never holds an import file the check
 * has not passed: a killed adopt (SIGKILL, Ctrl-C) leaves at most this directory, which no engine
 * run of the stack reads, and the next adopt removes it. Beside the stack, not inside it: a local
 * backend's relative state path (`../../../terraform.<stack>.tfstate`) then names the same file.
 */
export const CHECK_DIRECTORY_PREFIX = '.adopt-check-';

const CHECK_DIRECTORY = /^\.adopt-check-(\d+)-/;

/** The check directory of a stack directory for this process. */
export function checkDirectoryOf(stackDir: string, pid: number = process.pid): string {
  return path.join(path.dirname(stackDir), `${CHECK_DIRECTORY_PREFIX}${pid}-${path.basename(stackDir)}`);
}

/**
 * Makes the check directory of a stack directory: a link to each of its entries (except the import
 * file and half-written files), and `importFile` as the import file. Planned with `-lock=false`,
 * the engine only reads through the links.
 * @returns the directory
 */
export function makeCheckDirectory(stackDir: string, importFile: string | undefined): string {
  const dir = checkDirectoryOf(stackDir);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { mode: 0o700 });
  for (const name of fs.readdirSync(stackDir)) {
    if (name === IMPORT_FILE || /\.writing-\d+$/.test(name)) continue;
    // The seal is the check directory's own: it records the new import file too.
    if (name === SEAL_FILE) fs.copyFileSync(path.join(stackDir, name), path.join(dir, name));
    else fs.symlinkSync(path.join(stackDir, name), path.join(dir, name));
  }
  if (importFile !== undefined) fs.writeFileSync(path.join(dir, IMPORT_FILE), importFile, { mode: 0o644 });
  sealBookkeeping(dir, { [IMPORT_FILE]: importFile }, false);
  return dir;
}

/** Removes a check directory (its links, never what they point to). */
export function removeCheckDirectory(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * The check directories in `<outdir>/stacks` whose adopt no longer runs (killed during its plan
 * check), sorted; with `remove`, deletes them (links only: the stack's files stay).
 */
export function removeCheckDirectoryLeftovers(stacksDir: string, remove: boolean, running: (pid: number) => boolean = processRunning): string[] {
  const found = deadProcessLeftovers(stacksDir, CHECK_DIRECTORY, running);
  if (remove) for (const dir of found) removeCheckDirectory(dir);
  return found;
}
