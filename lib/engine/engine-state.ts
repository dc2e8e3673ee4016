import * as path from 'path';
import { runEngineCollected } from './engine-output';

/**
 * The resource addresses in a stack's state, asked of the engine (`state list`) so that every
 * backend the stack configures (local file, PostgreSQL, ...) is read the same way.
 * A stack never applied (no state file yet) has none.
 * @throws Error with the engine's message when the state cannot be read (e.g. `init` not run)
 */
export function stateAddresses(engine: string, stackDir: string, env: NodeJS.ProcessEnv): string[] {
  const { status, stdout, said } = runEngineCollected(engine, ['state', 'list'], stackDir, env);
  // A local backend that was never applied has no state file yet: nothing in state.
  if (status !== 0 && /No state file was found/.test(said)) return [];
  if (status !== 0) {
    throw new Error(
      `cannot read the state of ${stackDir} with \`${path.basename(engine)} state list\` (exit ${status}): ${said.split('\n').filter(Boolean).slice(0, 6).join(' ')}. ` +
        'Run `secretstore-iac tf STACK -- init` first',
    );
  }
  return stdout.split('\n').map((l) => l.trim()).filter(Boolean).sort();
}
