import * as fs from 'fs';
import * as path from 'path';
import { fileErrorCode, fileErrorText } from '../private/file-error-text';
import { UsageError } from './usage-error';

/**
 * A file the user names on the command line (`--log FILE`, `--usage FILE`, `--plan STACK=FILE`):
 * the option that names it, as given, and what it should be, for the sentence that says what is wrong.
 */
export interface InputFileOption {
  /** The option as the user wrote it: `--log`. */
  readonly option: string;
  /** The value as given (relative paths are resolved against the command's working directory). */
  readonly given: string;
  /** What the file should be, with its article: `the audit log`, `a usage file`. */
  readonly what: string;
  /** How the messages name it, when not as `<option> <given>` (`--plan app-roles=plan.json`). */
  readonly shown?: string;
}

/** How an option and its value appear in a message: the value quoted when it is empty or has spaces. */
export function optionValueText(option: string, given: string): string {
  return `${option} ${given === '' || /[\s"']/.test(given) ? JSON.stringify(given) : given}`;
}

function problem(input: InputFileOption, reason: string, fix?: string): UsageError {
  return new UsageError(`${input.shown ?? optionValueText(input.option, input.given)}: ${reason}; ${fix ?? `give the path of ${input.what}`}`);
}

/** The sentence for an error of `fs` on the named file: what is wrong, and what to do. */
export function inputFileError(input: InputFileOption, error: unknown): UsageError {
  switch (fileErrorCode(error)) {
    case 'ENOENT':
      return problem(input, 'no such file');
    case 'EISDIR':
      return problem(input, 'it is a directory, not a file', `give the path of ${input.what} inside it`);
    case 'EACCES':
    case 'EPERM':
      return problem(input, 'it cannot be read (permission denied)', 'run as a user who may read it, or give it read permission (chmod u+r)');
    default:
      return problem(input, fileErrorText(error));
  }
}

/**
 * The absolute path of a file the user named, checked to be one this command can read: it exists, is
 * a regular file (not a directory, a device such as `/dev/zero`, a pipe or a socket, which may never
 * end or block), and opens for reading. Nothing is read from it yet.
 * @throws UsageError naming the option, the path and what to do, for an empty path, a missing file,
 *   a directory, a device and a file that cannot be opened
 */
export function inputFilePath(input: InputFileOption, cwd: string): string {
  if (input.given === '') throw problem(input, 'an empty path');
  const file = path.resolve(cwd, input.given);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (e) {
    throw inputFileError(input, e);
  }
  if (stat.isDirectory()) throw inputFileError(input, Object.assign(new Error('directory'), { code: 'EISDIR' }));
  if (!stat.isFile()) {
    throw problem(input, `it is ${stat.isCharacterDevice() || stat.isBlockDevice() ? 'a device' : stat.isFIFO() ? 'a named pipe' : stat.isSocket() ? 'a socket' : 'not a file'}, not a regular file`);
  }
  // Whether it opens for reading, asked of the system by opening it: mode bits do not say it for
  // root, ACLs or procfs.
  try {
    fs.closeSync(fs.openSync(file, 'r'));
  } catch (e) {
    throw inputFileError(input, e);
  }
  return file;
}

/**
 * The bytes of a regular file the user named, at most `maxBytes` of them (an input that would not fit
 * in memory is refused before it is read, not met as an abort).
 * @throws UsageError as {@link inputFilePath} does, and for a file larger than `maxBytes`
 */
export function readInputFile(input: InputFileOption, cwd: string, maxBytes: number): Buffer {
  const file = inputFilePath(input, cwd);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    throw inputFileError(input, e);
  }
  try {
    // Read to one byte past the bound: the size stat gave may be stale, or 0 for a file of procfs.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(1 << 20, maxBytes + 1 - total));
      let n: number;
      try {
        n = fs.readSync(fd, chunk, 0, chunk.length, null);
      } catch (e) {
        throw inputFileError(input, e);
      }
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > maxBytes) throw problem(input, `it is larger than ${byteSize(maxBytes)}, more than ${input.what} can be`, `give the path of ${input.what}`);
    }
    return Buffer.concat(chunks, total);
  } finally {
    fs.closeSync(fd);
  }
}

/** A byte count as a person reads it: `64 MiB`, `512 KiB`. */
function byteSize(bytes: number): string {
  if (bytes >= 1 << 20 && bytes % (1 << 20) === 0) return `${bytes / (1 << 20)} MiB`;
  if (bytes >= 1 << 10 && bytes % (1 << 10) === 0) return `${bytes / (1 << 10)} KiB`;
  return `${bytes} bytes`;
}
