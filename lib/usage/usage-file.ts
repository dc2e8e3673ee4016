import * as fs from 'node:fs';
import { fileErrorText } from '../private/file-error-text';
import { USAGE_FILE_FORMAT, USAGE_FILE_VERSION, UsageReport } from './usage-report';

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Problems of the parts of a usage file the review reads, each as `field: rule`. */
function usageFileProblems(raw: unknown): string[] {
  if (!isRecord(raw)) return ['the file: must be a JSON object (`secretstore-iac usage --format json`)'];
  if (raw.format !== USAGE_FILE_FORMAT) return [`format: must be "${USAGE_FILE_FORMAT}" (the output of \`secretstore-iac usage --format json\`), found ${JSON.stringify(raw.format)}`];
  if (raw.version !== USAGE_FILE_VERSION) {
    return [`version: must be ${USAGE_FILE_VERSION}, found ${JSON.stringify(raw.version)}: write the file again with this version's \`secretstore-iac usage --format json\``];
  }
  const problems: string[] = [];
  const time = (value: unknown) => typeof value === 'string' && !Number.isNaN(Date.parse(value));
  for (const side of ['window', 'seen'] as const) {
    const part = raw[side];
    if (!isRecord(part)) problems.push(`${side}: must be an object`);
  }
  if (!Array.isArray(raw.identities)) return [...problems, 'identities: must be an array'];
  raw.identities.forEach((u: unknown, i) => {
    const at = `identities[${i}]`;
    if (!isRecord(u)) return void problems.push(`${at}: must be an object`);
    if (typeof u.identity !== 'string' || u.identity === '') problems.push(`${at}.identity: must be a name (\`jwt/registry-ci\`)`);
    if (!Array.isArray(u.used)) return void problems.push(`${at}.used: must be an array`);
    u.used.forEach((g: unknown, j) => {
      const grant = `${at}.used[${j}]`;
      if (!isRecord(g) || !Array.isArray(g.requests)) return void problems.push(`${grant}.requests: must be an array`);
      g.requests.forEach((r: unknown, k) => {
        const request = `${grant}.requests[${k}]`;
        if (!isRecord(r)) return void problems.push(`${request}: must be an object`);
        if (typeof r.path !== 'string' || r.path === '') problems.push(`${request}.path: must be a path`);
        if (typeof r.operation !== 'string' || r.operation === '') problems.push(`${request}.operation: must be an operation`);
        if (!Number.isInteger(r.count) || (r.count as number) < 1) problems.push(`${request}.count: must be a whole number of at least 1`);
        if (!time(r.lastUse)) problems.push(`${request}.lastUse: must be a time (RFC 3339)`);
      });
    });
  });
  return problems;
}

/**
 * Reads a usage file: the JSON `secretstore-iac usage --format json` writes (the drift job can keep
 * one per run), of {@link USAGE_FILE_FORMAT} and {@link USAGE_FILE_VERSION}. The parts the review
 * reads (identities, their used requests, the window) are checked, every problem named at once.
 * @throws Error naming the file and each field that breaks the shape
 */
export function readUsageFile(file: string): UsageReport {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read the usage file ${file}: ${fileErrorText(e)}`);
  }
  return parseUsageFile(text, file);
}

/**
 * A usage file's text read as {@link readUsageFile} reads the file.
 * @param file how to name it in messages
 * @throws Error naming the file and each field that breaks the shape
 */
export function parseUsageFile(text: string, file: string): UsageReport {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`cannot read the usage file ${file}: it is not JSON (${(e as Error).message})`);
  }
  const problems = usageFileProblems(raw);
  if (problems.length > 0) throw new Error(`the usage file ${file} is not a usage report:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  return raw as UsageReport;
}
