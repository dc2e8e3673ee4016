import * as fs from 'fs';
import * as YAML from 'yaml';
import { AccessInvariant } from './access-invariant';
import { readInvariantDeclaration } from './invariant-declaration';

/** The largest invariants file read (bytes): a security team's statements fit many times over. */
export const MAX_INVARIANTS_FILE_BYTES = 1024 * 1024;

/** An invariants file that cannot be read as one (missing, not a regular file, too large, not text), said in one sentence. */
export class InvariantsFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvariantsFileError';
  }
}

/**
 * Reads a security team's invariants file: JSON (`.json`) or YAML (any other name), a list of
 * invariants or an object with an `invariants` list. Only a regular file of at most
 * {@link MAX_INVARIANTS_FILE_BYTES} bytes of UTF-8 text is read (never a directory, device or pipe).
 * @throws InvariantsFileError when the file cannot be read as one
 * @throws Error naming the file and every problem of it at once
 */
export function readInvariantsFile(file: string): readonly AccessInvariant[] {
  const text = readInvariantsText(file);
  let data: unknown;
  try {
    data = file.endsWith('.json') ? JSON.parse(text) : YAML.parse(text);
  } catch (error) {
    throw new Error(`${file}: not ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message.split('\n')[0]}`);
  }
  const { invariants, problems } = readInvariantDeclaration(data);
  if (problems.length > 0) {
    throw new Error(`${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems.map((p) => `  ${String(p)}`).join('\n')}`);
  }
  return invariants;
}

function readInvariantsText(file: string): string {
  if (file === '') throw new InvariantsFileError('the invariants file name is empty: give the path of a JSON or YAML file');
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    throw new InvariantsFileError(`cannot read the invariants file ${file}: ${unreadable(error)}`);
  }
  if (stat.isDirectory()) throw new InvariantsFileError(`the invariants file ${file} is a directory: give the path of a JSON or YAML file`);
  if (!stat.isFile()) throw new InvariantsFileError(`the invariants file ${file} is not a regular file (a device, pipe or socket): give the path of a JSON or YAML file`);
  if (stat.size > MAX_INVARIANTS_FILE_BYTES) throw new InvariantsFileError(tooLarge(file));
  // Read at most one byte more than the bound: a file that grew since stat is still refused.
  const buffer = Buffer.alloc(MAX_INVARIANTS_FILE_BYTES + 1);
  let length = 0;
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    for (let n = -1; n !== 0 && length < buffer.length; length += n) n = fs.readSync(fd, buffer, length, buffer.length - length, null);
  } catch (error) {
    throw new InvariantsFileError(`cannot read the invariants file ${file}: ${unreadable(error)}`);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  if (length > MAX_INVARIANTS_FILE_BYTES) throw new InvariantsFileError(tooLarge(file));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, length));
  } catch {
    throw new InvariantsFileError(`the invariants file ${file} is not UTF-8 text`);
  }
}

function tooLarge(file: string): string {
  return `the invariants file ${file} is larger than ${MAX_INVARIANTS_FILE_BYTES} bytes (1 MiB), the most an invariants file may hold`;
}

/** Why a file cannot be read, in words (never the errno code). */
function unreadable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'there is no such file';
  if (code === 'ENOTDIR') return 'a part of its path is not a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ELOOP') return 'its symbolic links loop';
  if (code === 'ENAMETOOLONG') return 'its name is too long';
  return 'the system refused to read it';
}
