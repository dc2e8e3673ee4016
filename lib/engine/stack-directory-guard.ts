import * as fs from 'fs';
import * as path from 'path';
import { BOOKKEEPING_FILES, bookkeepingProblems, SYNTHESIZED_STACK_FILE } from './bookkeeping-seal';
import { GuardRefusal } from './guard-refusal';
import { isEngineConfigurationFile } from '../sources/stack-digest';

/** Test files the engine reads from the directory it runs in (`test`): `*.tftest.hcl`, `*.tofutest.hcl`, their `.json` forms. */
const ENGINE_TEST_FILE = /^[^.#].*\.(tftest|tofutest)\.(hcl|json)$/;

/**
 * Whether the engine reads `name` from the directory it runs in, whatever its content: configuration
 * and variable files ({@link isEngineConfigurationFile}: `*.tf`, `*.tf.json`, `*.tofu`, `*.tofu.json`,
 * hence every override file `*_override.*`, `override.*`; `terraform.tfvars`, `*.auto.tfvars`, their
 * `.json` forms) and test files.
 */
function engineReads(name: string): boolean {
  return isEngineConfigurationFile(name) || ENGINE_TEST_FILE.test(name);
}

/** Directories the engine reads from the directory it runs in: other workspaces' states, test files. */
const ENGINE_READ_DIRECTORIES = ['terraform.tfstate.d', 'tests'];

/**
 * The engine-read files a stack directory may hold: the synthesis's and the tool's own
 * ({@link BOOKKEEPING_FILES}, each verified against its seal).
 */
export const TRUSTED_ENGINE_FILES: ReadonlySet<string> = new Set([SYNTHESIZED_STACK_FILE, ...BOOKKEEPING_FILES.map((f) => f.name)]);

/**
 * What in a stack directory the engine would read that neither the synthesis nor the tool wrote,
 * one line each naming the file and the fix: files of configuration, variables or tests the tool
 * does not know; a workspace other than `default` selected (`.terraform/environment`) or other
 * workspaces' states (`terraform.tfstate.d/`); the tool's own files changed since it wrote them
 * ({@link bookkeepingProblems}). Sorted by name.
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
    if (engineReads(name) && !TRUSTED_ENGINE_FILES.has(name)) {
      problems.push(
        `${name}: the engine reads it (configuration, variables or tests), but neither the synthesis nor secretstore-iac wrote it: what it changes is in no review. Fix: remove it; declare what it does in the configuration (stacks/*.ts) and synthesize again`,
      );
    } else if (ENGINE_READ_DIRECTORIES.includes(name)) {
      problems.push(`${name}/: the engine reads it (${name === 'tests' ? 'test files' : 'the states of other workspaces'}), the tool never writes it. Fix: remove it; each stack has one state, in its default workspace`);
    }
  }
  try {
    const workspace = fs.readFileSync(path.join(stackDir, '.terraform', 'environment'), 'utf8').trim();
    if (workspace !== '' && workspace !== 'default') {
      problems.push(`.terraform/environment selects another workspace than \`default\`: another state than the one the guards and \`drift\` read. Fix: \`secretstore-iac tf STACK -- workspace select default\`, or remove .terraform/environment`);
    }
  } catch {
    // No workspace selected: the default one.
  }
  return [...problems, ...bookkeepingProblems(stackDir)];
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
      `${path.basename(stackDir)}: nothing run: ${stackDir} holds ${problems.length === 1 ? 'a file' : `${problems.length} files`} the engine would read that neither the synthesis nor secretstore-iac wrote as it is:\n  ${problems.join('\n  ')}`,
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
