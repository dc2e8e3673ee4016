import * as fs from 'fs';
import * as path from 'path';
import { AccessChangeRecord, parseAccessChangeRecord } from '../access/access-change-record';
import { ACCESS_CHANGE_FILE } from '../render/configuration-pipeline-yaml';

/**
 * The canonical access change this job's review wrote ({@link ACCESS_CHANGE_FILE} in the job's
 * directory `dir`), or undefined when it wrote none (each job removes an earlier run's before its review).
 * @throws Error naming the file when it is not an access-change record
 */
export function readJobAccessChange(dir: string): AccessChangeRecord | undefined {
  const file = path.join(dir, ACCESS_CHANGE_FILE);
  return fs.existsSync(file) ? parseAccessChangeRecord(JSON.parse(fs.readFileSync(file, 'utf8')), ACCESS_CHANGE_FILE) : undefined;
}
