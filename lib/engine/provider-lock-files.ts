import * as fs from 'fs';
import * as path from 'path';
import { CDKTF_CONFIG_FILE } from '../sources/cdktf-app-command';

/** The engine's dependency lock file: the provider versions and checksums `init` selected. */
export const PROVIDER_LOCK_FILE = '.terraform.lock.hcl';

/**
 * Directory, beside `cdktf.json`, where a configuration repository commits its stacks' lock files:
 * `locks/<stack>/.terraform.lock.hcl`. The engine writes its lock in the stack's directory inside
 * the output directory, which is not committed (synthesis owns it).
 */
export const PROVIDER_LOCKS_DIR = 'locks';

/**
 * The committed lock file of the stack synthesized at `stackDir` (`<outdir>/stacks/<stack>`):
 * `locks/<stack>/.terraform.lock.hcl` in the repository holding the output directory, that is the
 * output directory's parent when it holds `cdktf.json`; undefined when it does not (an output
 * directory outside a configuration repository: the engine's lock stays in the stack directory).
 */
export function committedProviderLockFile(stackDir: string): string | undefined {
  const stack = path.basename(stackDir);
  const repository = path.dirname(path.dirname(path.dirname(stackDir)));
  if (!fs.existsSync(path.join(repository, CDKTF_CONFIG_FILE))) return undefined;
  return path.join(repository, PROVIDER_LOCKS_DIR, stack, PROVIDER_LOCK_FILE);
}

function readIfFile(file: string): Buffer | undefined {
  return fs.existsSync(file) && fs.statSync(file).isFile() ? fs.readFileSync(file) : undefined;
}

/** Replaces `file` by a rename, so that a reader never sees it half-written. */
function writeWhole(file: string, content: Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const staging = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(staging, content);
  fs.renameSync(staging, file);
}

/**
 * Runs the engine in `stackDir` with the stack's committed lock file (see
 * {@link committedProviderLockFile}): copied into the stack directory before the engine runs (the
 * committed one wins over what an earlier run left there), and copied back when the engine ended
 * successfully with another lock (`init` selected or upgraded a provider, `providers lock` added
 * checksums), with one line through `say` asking to commit it.
 *
 * @param run runs the engine and returns its exit code
 * @returns the engine's exit code
 */
export async function keepProviderLockFile(stackDir: string, say: (line: string) => void, run: () => Promise<number>): Promise<number> {
  const committed = committedProviderLockFile(stackDir);
  if (committed === undefined) return run();
  const working = path.join(stackDir, PROVIDER_LOCK_FILE);
  const before = readIfFile(committed);
  if (before !== undefined && !before.equals(readIfFile(working) ?? Buffer.alloc(0))) writeWhole(working, before);
  const code = await run();
  const after = code === 0 ? readIfFile(working) : undefined;
  if (after !== undefined && (before === undefined || !after.equals(before))) {
    writeWhole(committed, after);
    const shown = path.relative(path.dirname(path.dirname(path.dirname(committed))), committed);
    say(`secretstore-iac tf: the engine ${before === undefined ? 'wrote' : 'changed'} the provider lock file: copied to ${shown}; commit it`);
  }
  return code;
}
