import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { writeFileAtomically } from '../private/atomic-file';
import { bookkeepingContentProblems } from './bookkeeping-content';
import { IMPORT_FILE } from '../reconcile/import-blocks';
import { RETIRED_GRANTS_FILE, RETIRED_OWN_GRANTS_FILE } from '../reconcile/retired-stack-grants';
import { MOVES_FILE } from '../reconcile/stack-moves';

/** The file the synthesis writes into each stack directory: the stack's configuration. */
export const SYNTHESIZED_STACK_FILE = 'cdk.tf.json';

/**
 * The files the tool itself writes into a stack directory beside the synthesis, and which command
 * writes each: its bookkeeping. Each is sealed ({@link SEAL_FILE}) when written and verified before
 * every engine run; one list, built from the constants the writers use.
 */
export const BOOKKEEPING_FILES: ReadonlyArray<{ readonly name: string; readonly writer: 'moves' | 'adopt' }> = [
  { name: MOVES_FILE, writer: 'moves' },
  { name: RETIRED_GRANTS_FILE, writer: 'moves' },
  { name: RETIRED_OWN_GRANTS_FILE, writer: 'moves' },
  { name: IMPORT_FILE, writer: 'adopt' },
];

/**
 * The seal of a stack directory's bookkeeping: for each file the tool wrote there, the SHA-256 of
 * what it wrote and, for what `moves` derived from the synthesis, the SHA-256 of the `cdk.tf.json` it
 * was derived from (`none` for a retired stack, which has none). A digest kept beside the file detects
 * an accidental edit and a file left from another synthesis; it is no verification: anyone who
 * rewrites a file can compute its seal again (the `moves` of a merge request's pipeline holds no
 * secret to key it with). So the content is checked against what the synthesis derives, whatever
 * the seal says ({@link bookkeepingContentProblems}: only `moved`/`import`/`removed` blocks the
 * synthesis agrees with, never a `resource` block; the override only keeps retired stacks' grants;
 * `retired-own-grants.json` is checked against HEAD's synthesis), and the plan is reviewed.
 */
export const SEAL_FILE = 'secretstore-iac-seal.json';

/** One sealed file: its digest, and the digest of the synthesis it was derived from (if bound). */
interface SealEntry {
  readonly sha256: string;
  readonly synthesis?: string;
}

/** The synthesis a retired stack's files were derived from: none (its directory has no `cdk.tf.json`). */
const NO_SYNTHESIS = 'none';

const sha256 = (content: string | Buffer): string => createHash('sha256').update(content).digest('hex');

/** The SHA-256 of a stack directory's `cdk.tf.json`, or undefined when it has none (a retired stack). */
export function synthesisDigest(stackDir: string): string | undefined {
  const file = path.join(stackDir, SYNTHESIZED_STACK_FILE);
  return fs.existsSync(file) ? sha256(fs.readFileSync(file)) : undefined;
}

/** The seal's entries, or undefined when it is absent or not what the tool writes. */
function readSeal(stackDir: string): Record<string, SealEntry> | undefined {
  try {
    const files = (JSON.parse(fs.readFileSync(path.join(stackDir, SEAL_FILE), 'utf8')) as { files?: unknown }).files;
    if (files === null || typeof files !== 'object' || Array.isArray(files)) return undefined;
    const entries: Record<string, SealEntry> = {};
    for (const [name, entry] of Object.entries(files as Record<string, unknown>)) {
      const { sha256: digest, synthesis } = (entry ?? {}) as Record<string, unknown>;
      if (typeof digest !== 'string' || (synthesis !== undefined && typeof synthesis !== 'string')) return undefined;
      entries[name] = synthesis === undefined ? { sha256: digest } : { sha256: digest, synthesis };
    }
    return entries;
  } catch {
    return undefined;
  }
}

/**
 * The SHA-256 the stack directory's seal records for one of its bookkeeping files (the file itself
 * may have been taken out of the directory since), or undefined when the seal records none.
 */
export function sealedDigest(stackDir: string, name: string): string | undefined {
  return readSeal(stackDir)?.[name]?.sha256;
}

/**
 * Records in the stack directory's seal what a command wrote there (`content`) or removed
 * (`undefined`), keeping the other files' entries; call it right after writing them.
 * @param bound whether the files were derived from the stack's synthesis as it is now (`moves`): a
 *   later synthesis that differs makes them stale, and refused until the command runs again
 */
export function sealBookkeeping(stackDir: string, written: Readonly<Record<string, string | undefined>>, bound: boolean): void {
  const entries = { ...(readSeal(stackDir) ?? {}) };
  const synthesis = bound ? (synthesisDigest(stackDir) ?? NO_SYNTHESIS) : undefined;
  for (const [name, content] of Object.entries(written)) {
    if (content === undefined) delete entries[name];
    else entries[name] = synthesis === undefined ? { sha256: sha256(content) } : { sha256: sha256(content), synthesis };
  }
  const file = path.join(stackDir, SEAL_FILE);
  const names = Object.keys(entries).sort();
  if (names.length === 0) {
    fs.rmSync(file, { force: true });
    return;
  }
  const document = {
    '//': 'Written by secretstore-iac (moves, adopt): the SHA-256 of each file it wrote into this stack directory, and of the cdk.tf.json it was derived from. `secretstore-iac tf` and `adopt` refuse a file that differs (docs/operators.md). Do not edit.',
    files: Object.fromEntries(names.map((n) => [n, entries[n]])),
  };
  writeFileAtomically(file, `${JSON.stringify(document, null, 2)}\n`);
}

/**
 * What in a stack directory's bookkeeping is not what the tool wrote, one line each naming the file
 * and the fix: a bookkeeping file the seal does not record, whose content differs from what was
 * sealed, or derived from another synthesis than the directory's `cdk.tf.json`; and, whatever the
 * seal says, content the tool does not derive from the synthesis ({@link bookkeepingContentProblems}).
 * @param stackName the stack's name, when `stackDir` is a copy of its directory (an engine run's
 *   fresh working directory: the check reads the very bytes the engine will read)
 */
export function bookkeepingProblems(stackDir: string, stackName: string = path.basename(stackDir)): string[] {
  const present = BOOKKEEPING_FILES.filter((f) => fs.existsSync(path.join(stackDir, f.name)));
  if (present.length === 0) return [];
  const seal = readSeal(stackDir);
  const synthesis = synthesisDigest(stackDir) ?? NO_SYNTHESIS;
  const problems: string[] = [];
  for (const { name, writer } of present) {
    const fix = `remove it and run \`secretstore-iac ${writer === 'moves' ? 'moves BASE HEAD' : 'adopt STACK'}\` again (it writes the file and its seal)`;
    const entry = seal?.[name];
    if (entry === undefined) {
      problems.push(`${name}: not recorded in ${SEAL_FILE} as written by \`secretstore-iac ${writer}\`${seal === undefined ? ` (${SEAL_FILE} is absent or not what the tool writes)` : ''}. Fix: ${fix}`);
    } else if (entry.sha256 !== sha256(fs.readFileSync(path.join(stackDir, name)))) {
      problems.push(`${name}: changed since \`secretstore-iac ${writer}\` wrote it (its SHA-256 differs from ${SEAL_FILE}). Fix: ${fix}; change the configuration, never this file`);
    } else if (entry.synthesis !== undefined && entry.synthesis !== synthesis) {
      problems.push(`${name}: derived from another synthesis of this stack than its cdk.tf.json (synthesized again since \`secretstore-iac ${writer}\` ran). Fix: ${fix}`);
    }
  }
  return [...problems, ...bookkeepingContentProblems(stackDir, stackName)];
}
