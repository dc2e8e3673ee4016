import { spawnSync } from 'child_process';
import * as path from 'path';

/**
 * The resource addresses in a stack's state, asked of the engine (`state list`) so that every
 * backend the stack configures (local file, PostgreSQL, ...) is read the same way.
 * A stack never applied (no state file yet) has none.
 * @throws Error with the engine's message when the state cannot be read (e.g. `init` not run)
 */
export function stateAddresses(engine: string, stackDir: string, env: NodeJS.ProcessEnv): string[] {
  const result = spawnSync(engine, ['state', 'list'], {
    cwd: stackDir,
    env: { ...env, TF_IN_AUTOMATION: '1' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  const said = `${result.stderr ?? ''}${result.stdout ?? ''}`.replace(/\x1b\[[0-9;]*m/g, '').trim();
  // A local backend that was never applied has no state file yet: nothing in state.
  if (result.status !== 0 && /No state file was found/.test(said)) return [];
  if (result.status !== 0) {
    throw new Error(
      `cannot read the state of ${stackDir} with \`${path.basename(engine)} state list\` (exit ${result.status}): ${said.split('\n').filter(Boolean).slice(0, 6).join(' ')}. ` +
        'Run `secretstore-iac tf STACK -- init` first',
    );
  }
  return result.stdout.split('\n').map((l) => l.trim()).filter(Boolean).sort();
}
