import * as fs from 'fs';
import * as YAML from 'yaml';
import { AccessInvariant } from './access-invariant';
import { readInvariantDeclaration } from './invariant-declaration';

/**
 * Reads a security team's invariants file: JSON (`.json`) or YAML (any other name), a list of
 * invariants or an object with an `invariants` list.
 * @throws Error naming the file and every problem of it at once
 */
export function readInvariantsFile(file: string): readonly AccessInvariant[] {
  const text = fs.readFileSync(file, 'utf8');
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
