import * as fs from 'fs';
import { processRunning } from './process-running';
import { deadProcessLeftovers } from './dead-process-leftovers';

export { processRunning } from './process-running';

/** The temporary name {@link writeFileAtomically} writes to beside `file`: `<file>.writing-<pid>`. */
export function writingName(file: string, pid: number = process.pid): string {
  return `${file}.writing-${pid}`;
}

const WRITING = /\.writing-(\d+)$/;

/**
 * Writes a file by writing a temporary file beside it and renaming it over the target, so that a
 * killed run leaves the old file or the new one, never a half-written one (which would make
 * every later `init`, plan and adopt fail). The temporary name does not end in `.tf.json`: the
 * engine never reads it; a killed run leaves it, and {@link removeWritingLeftovers} removes it.
 */
export function writeFileAtomically(file: string, content: string | Buffer): void {
  const temporary = writingName(file);
  try {
    fs.writeFileSync(temporary, content, { mode: 0o644 });
    fs.renameSync(temporary, file);
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}


/**
 * The `.writing-<pid>` files in `dir` whose writer no longer runs (a killed `adopt` or `moves`),
 * sorted; with `remove`, deletes them.
 */
export function removeWritingLeftovers(dir: string, remove: boolean, running: (pid: number) => boolean = processRunning): string[] {
  const found = deadProcessLeftovers(dir, WRITING, running);
  if (remove) for (const file of found) fs.rmSync(file, { force: true });
  return found;
}
