import * as fs from 'fs';
import * as path from 'path';
import { AccessInvariant } from '../invariants/access-invariant';
import { readInvariantsFile } from '../invariants/invariants-file';
import { UsageError } from './usage-error';

/**
 * The invariants of an `--invariants FILE` option (resolved against `cwd`).
 * @throws UsageError when the file does not exist; Error naming every problem of a file that does
 */
export function readInvariantsOption(file: string, cwd: string): readonly AccessInvariant[] {
  const resolved = path.resolve(cwd, file);
  if (!fs.existsSync(resolved)) throw new UsageError(`no such invariants file: ${file}`);
  return readInvariantsFile(resolved);
}
