import * as path from 'path';
import { parseUsageFile } from '../usage/usage-file';
import { UsageReport } from '../usage/usage-report';
import { readInputFile } from './input-file';

/** The largest usage file read: its size grows with the distinct paths used, far below this. */
const MAX_USAGE_FILE_BYTES = 256 * 1024 * 1024;

/**
 * The usage file of `--usage FILE` (`access-diff`, `narrow`): a readable regular file, at most
 * {@link MAX_USAGE_FILE_BYTES}, in the shape `usage --format json` writes.
 * @throws UsageError for a path that is no such file; Error naming each field that breaks the shape
 */
export function readUsageFileOption(given: string, cwd: string): UsageReport {
  const input = { option: '--usage', given, what: 'a usage file (`secretstore-iac usage --format json`)' };
  return parseUsageFile(readInputFile(input, cwd, MAX_USAGE_FILE_BYTES).toString('utf8'), path.resolve(cwd, given));
}
