import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { engineProcessEnvironment } from './engine-run-environment';
import { toolchainCache } from './toolchain-cache';

export { toolchainCache };

/**
 * Engines looked for on PATH, in this order, unless `--engine`, SECRETSTORE_IAC_ENGINE or
 * SECRETSTORE_IAC_TOFU names one, or scripts/toolchain.sh has built one.
 */
export const ENGINE_NAMES = ['tofu', 'terraform'] as const;

/** `name` itself when it is a path that exists, else the first `PATH` directory holding it. */
function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  if (name.includes('/')) return fs.existsSync(name) ? name : undefined;
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, name);
    if (fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The engine a command runs, and why that one. */
export interface EngineChoice {
  /** The binary. */
  readonly path: string;
  /** Why it was chosen (`--engine`, `SECRETSTORE_IAC_TOFU`, `the toolchain npm run toolchain built`, `tofu on PATH`). */
  readonly why: string;
}

/**
 * The engine every command runs (`tf`, `adopt`): `wanted` (`--engine`: a path or a name on PATH),
 * else SECRETSTORE_IAC_ENGINE, else SECRETSTORE_IAC_TOFU, else the OpenTofu that `npm run toolchain`
 * built, else tofu, else terraform on PATH. One function for all of them, so that the engine that
 * reads a stack's state is the one that applies it. Where it installs providers from is the engine
 * run's CLI configuration (lib/engine/engine-run-environment.ts), whichever engine this is.
 * @throws Error naming what was looked for
 */
export function chooseEngine(wanted: string | undefined, env: NodeJS.ProcessEnv): EngineChoice {
  const named: Array<[string | undefined, string]> = [
    [wanted, '--engine'],
    [env.SECRETSTORE_IAC_ENGINE || undefined, 'SECRETSTORE_IAC_ENGINE'],
    [env.SECRETSTORE_IAC_TOFU || undefined, 'SECRETSTORE_IAC_TOFU'],
  ];
  const given = named.find(([name]) => name !== undefined);
  if (given) {
    const found = onPath(given[0]!, env);
    if (!found) throw new Error(`no engine found: ${given[0]} is not on PATH (named by ${given[1]}); install OpenTofu or Terraform, or pass --engine`);
    return { path: found, why: given[1] };
  }
  const cache = toolchainCache(env);
  const built = cache ? path.join(cache, 'bin', 'tofu') : undefined;
  if (built && fs.existsSync(built)) return { path: built, why: 'the OpenTofu npm run toolchain built' };
  for (const name of ENGINE_NAMES) {
    const found = onPath(name, env);
    if (found) return { path: found, why: `${name} on PATH` };
  }
  throw new Error(`no engine found: ${ENGINE_NAMES.join(' or ')} is not on PATH and npm run toolchain has not built one; install OpenTofu or Terraform, run npm run toolchain, or pass --engine`);
}

/**
 * The engine's own version line (`OpenTofu v1.12.6`), or undefined when it does not say; `env` is an
 * engine run's ({@link engineProcessEnvironment}).
 */
export function engineVersion(engine: string, env: NodeJS.ProcessEnv): string | undefined {
  // In the run's own home: `version` also lists the providers of the directory it runs in.
  const runEnv = engineProcessEnvironment(env);
  const result = spawnSync(engine, ['version'], { cwd: runEnv.HOME, env: { ...runEnv, TF_IN_AUTOMATION: '1' }, encoding: 'utf8', timeout: 5_000 });
  return result.status === 0 ? result.stdout.split('\n')[0].trim() || undefined : undefined;
}
