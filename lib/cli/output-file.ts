import * as fs from 'fs';
import * as path from 'path';
import { fileErrorText } from '../private/file-error-text';
import { optionValueText } from './input-file';
import { UsageError } from './usage-error';

/**
 * The absolute path of a file the user names for a command to write (`--markdown-file FILE`,
 * `--risk-flag-count FILE`), checked before the command does its work: not empty, not a directory,
 * in a directory that exists. A write that still fails is {@link writeOutputFile}'s to say.
 * @throws UsageError naming the option, the path and what to do
 */
export function outputFilePath(option: string, given: string, cwd: string): string {
  const named = optionValueText(option, given);
  if (given === '') throw new UsageError(`${named}: an empty path; give the file to write`);
  const file = path.resolve(cwd, given);
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(file);
  } catch {
    // Absent: written new, in its directory (checked below).
  }
  if (stat?.isDirectory()) throw new UsageError(`${named}: it is a directory; give the path of a file to write (inside it, say)`);
  if (stat !== undefined && !stat.isFile()) throw new UsageError(`${named}: it is not a regular file; give the path of a file to write`);
  const dir = path.dirname(file);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`${named}: the directory ${dir} does not exist; create it, or give a file in a directory that does`);
  return file;
}

/**
 * Writes a file the user named, an error of the write said as a sentence.
 * @throws Error naming the option, the path and why the write failed
 */
export function writeOutputFile(option: string, file: string, content: string): void {
  try {
    fs.writeFileSync(file, content);
  } catch (e) {
    throw new Error(`${optionValueText(option, file)}: cannot be written (${fileErrorText(e)}); give a file you may write`);
  }
}
