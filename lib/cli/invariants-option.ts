import * as path from 'path';
import { AccessInvariant } from '../invariants/access-invariant';
import { InvariantSelectionError } from '../invariants/invariant-selection';
import { InvariantsFileError, readInvariantsFile } from '../invariants/invariants-file';
import { UsageError } from './usage-error';

/**
 * The invariants of an `--invariants FILE` option (resolved against `cwd`). The option is given
 * once: a second one is refused rather than one of them silently dropped (put every invariant in one
 * file).
 * @throws UsageError when the option is repeated or the file cannot be read as one; Error naming
 *   every problem of a file that can
 */
export function readInvariantsOption(value: string | readonly string[], cwd: string): readonly AccessInvariant[] {
  const files = typeof value === 'string' ? [value] : value;
  if (files.length !== 1) throw new UsageError(`--invariants is given ${files.length} times (${files.join(', ')}): give it once, with every invariant in that one file`);
  try {
    return readInvariantsFile(files[0] === '' ? '' : path.resolve(cwd, files[0]));
  } catch (error) {
    throw error instanceof InvariantsFileError ? new UsageError(error.message) : error;
  }
}

/**
 * Runs `run`, with an invariant that speaks of nobody (`InvariantSelectionError`) turned into a
 * usage error: the invariants given do not fit the identities checked.
 */
export function usageOnSelection<T>(run: () => T): T {
  const usage = (error: unknown): never => {
    throw error instanceof InvariantSelectionError ? new UsageError(error.message) : error;
  };
  try {
    const result = run();
    return (result instanceof Promise ? result.catch(usage) : result) as T;
  } catch (error) {
    return usage(error);
  }
}
