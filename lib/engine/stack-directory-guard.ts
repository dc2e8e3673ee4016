import * as fs from 'fs';
import * as path from 'path';
import { BOOKKEEPING_FILES, bookkeepingProblems, SEAL_FILE, SYNTHESIZED_STACK_FILE } from './bookkeeping-seal';
import { ENGINE_DATA_DIR, engineRecordProblems } from './engine-records';
import { GuardRefusal } from './guard-refusal';
import { PROVIDER_LOCK_FILE } from './provider-lock-files';
import { REMOVALS_SUFFIX } from '../render/configuration-pipeline-yaml';

/**
 * The files the engine reads as configuration that a stack directory may hold: the synthesis's and
 * the tool's own ({@link BOOKKEEPING_FILES}, each verified against its seal).
 */
export const TRUSTED_ENGINE_FILES: ReadonlySet<string> = new Set([SYNTHESIZED_STACK_FILE, ...BOOKKEEPING_FILES.map((f) => f.name)]);

/**
 * The engine's own data in a stack directory, never configuration: `.terraform/` from `init`, the
 * provider lock file, a local state with its backup, lock and errored copy, a crash log. With the
 * families of {@link isEngineData}, what an engine run brings back from its fresh working directory
 * (lib/engine/engine-working-directory.ts). None of these names is one the engine reads as
 * configuration, variables or tests.
 */
const ENGINE_DATA: ReadonlySet<string> = new Set([
  ENGINE_DATA_DIR,
  PROVIDER_LOCK_FILE,
  'terraform.tfstate',
  'terraform.tfstate.backup',
  '.terraform.tfstate.lock.info',
  'errored.tfstate',
  'crash.log',
]);

/**
 * Whether `name` is the engine's data ({@link ENGINE_DATA}), or of its families: the timestamped
 * backups `state rm` and `state mv` write (`terraform.tfstate.<unix time>.backup`), saved plans
 * (`*.tfplan`) and `--removals-file` lists. One classification for the stack-directory guard and
 * the engine's working directory (what is linked in and brought back after a run).
 */
export function isEngineData(name: string): boolean {
  if (ENGINE_DATA.has(name)) return true;
  if (/^terraform\.tfstate\.\d+\.backup$/.test(name)) return true;
  return /^[A-Za-z0-9][A-Za-z0-9._-]*\.tfplan$/.test(name) || (/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) && name.endsWith(REMOVALS_SUFFIX));
}

/**
 * Whether `name` is an entry a stack directory may hold: a file of the synthesis or the tool
 * ({@link TRUSTED_ENGINE_FILES}), the seal, the engine's data ({@link isEngineData}), or the tool's
 * half-written files (`<file>.writing-<pid>`, `<lock file>.<pid>.tmp`) of a killed run.
 */
function knownEntry(name: string): boolean {
  if (TRUSTED_ENGINE_FILES.has(name) || name === SEAL_FILE || isEngineData(name)) return true;
  const writing = /^(.+)\.writing-\d+$/.exec(name);
  if (writing && (TRUSTED_ENGINE_FILES.has(writing[1]) || writing[1] === SEAL_FILE)) return true;
  return new RegExp(`^${PROVIDER_LOCK_FILE.replace(/\./g, '\\.')}\\.\\d+\\.tmp$`).test(name);
}

/**
 * What in a stack directory the engine might read that neither the synthesis nor the tool wrote, one
 * line each naming the entry and the fix. An allowlist: every entry that is not a file of the
 * synthesis, of the tool or of the engine ({@link knownEntry}) is refused, whatever its name (an
 * override file, `#team_override.tf.json`, variables, `tests/`, a file the engines of today skip);
 * likewise the engine's records choosing another workspace or backend configuration than the
 * synthesis declares ({@link engineRecordProblems}) and the tool's own files changed since it
 * wrote them ({@link bookkeepingProblems}). Sorted by name.
 */
export function stackDirectoryProblems(stackDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(stackDir).sort();
  } catch {
    return [];
  }
  const problems: string[] = [];
  for (const name of names) {
    if (knownEntry(name)) continue;
    problems.push(
      `${JSON.stringify(name)}: neither the synthesis, secretstore-iac nor the engine wrote it, and the engine may read it (configuration, variables or tests): what it changes is in no review. Fix: remove it (a stack directory holds only what the synthesis, the tool and the engine write); declare what it does in the configuration (stacks/*.ts) and synthesize again`,
    );
  }
  return [...problems, ...engineRecordProblems(stackDir), ...bookkeepingProblems(stackDir)];
}

/**
 * Thrown when a stack directory holds what the engine would read and no review covers
 * ({@link stackDirectoryProblems}): nothing was run; the CLI exits with
 * `ExitCode.destructionRefused` (4).
 */
export class UntrustedStackDirectory extends GuardRefusal {
  constructor(
    /** The stack directory. */
    readonly stackDir: string,
    /** One line per file: what and the fix. */
    readonly problems: readonly string[],
  ) {
    super(
      `${path.basename(stackDir)}: nothing run: ${stackDir} holds ${problems.length === 1 ? 'an entry' : `${problems.length} entries`} that neither the synthesis, secretstore-iac nor the engine wrote as it is:\n  ${problems.join('\n  ')}`,
    );
    this.name = 'UntrustedStackDirectory';
  }
}

/**
 * Refuses a stack directory with any of {@link stackDirectoryProblems}, all named at once.
 * @throws UntrustedStackDirectory (exit 4), before the engine runs
 */
export function refuseUntrustedStackDirectory(stackDir: string): void {
  const problems = stackDirectoryProblems(stackDir);
  if (problems.length > 0) throw new UntrustedStackDirectory(stackDir, problems);
}
