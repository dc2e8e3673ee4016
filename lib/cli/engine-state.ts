import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/** Engines looked for on PATH, in this order, unless `--engine` or SECRETSTORE_IAC_ENGINE names one (as `tf` does). */
const ENGINES = ['tofu', 'terraform'];

/**
 * The engine binary: `wanted` (a path or a name on PATH), else SECRETSTORE_IAC_ENGINE, else tofu,
 * else terraform on PATH.
 * @throws Error naming what was looked for
 */
export function findEngine(wanted: string | undefined, env: NodeJS.ProcessEnv): string {
  const onPath = (name: string): string | undefined => {
    if (name.includes('/')) return fs.existsSync(name) ? name : undefined;
    for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
      const candidate = path.join(dir, name);
      if (fs.existsSync(candidate)) return candidate;
    }
    return undefined;
  };
  const name = wanted ?? env.SECRETSTORE_IAC_ENGINE;
  const engine = name ? onPath(name) : ENGINES.map(onPath).find(Boolean);
  if (!engine) throw new Error(`no engine found: ${name ?? ENGINES.join(' or ')} is not on PATH; install OpenTofu or Terraform, or pass --engine`);
  return engine;
}

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
