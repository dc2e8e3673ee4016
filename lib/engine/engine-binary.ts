import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { vaultTlsVariables } from '../store/store-tls';
import { refuseEngineEnvironment } from './engine-environment-guard';

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
  /**
   * The CLI configuration of the toolchain (its provider mirror, no registry), when the engine is
   * the toolchain's own and `TF_CLI_CONFIG_FILE` is not set: without it the engine would ask the
   * online registry for the provider.
   */
  readonly cliConfig?: string;
}

/** The toolchain cache of scripts/toolchain.sh (`SECRETSTORE_IAC_CACHE`, else `~/.cache/secretstore-iac`). */
export function toolchainCache(env: NodeJS.ProcessEnv): string | undefined {
  if (env.SECRETSTORE_IAC_CACHE) return env.SECRETSTORE_IAC_CACHE;
  return env.HOME ? path.join(env.HOME, '.cache', 'secretstore-iac') : undefined;
}

/**
 * The engine every command runs (`tf`, `adopt`): `wanted` (`--engine`: a path or a name on PATH),
 * else SECRETSTORE_IAC_ENGINE, else SECRETSTORE_IAC_TOFU, else the OpenTofu that `npm run toolchain`
 * built (with its provider mirror), else tofu, else terraform on PATH. One function for all of
 * them, so that the engine that reads a stack's state is the one that applies it.
 * @throws Error naming what was looked for
 */
export function chooseEngine(wanted: string | undefined, env: NodeJS.ProcessEnv): EngineChoice {
  const choice = chooseEngineBinary(wanted, env);
  // A CLI configuration that names no file is ignored by the engine without a word: the provider
  // mirror it was meant to give (or the toolchain's) silently turns into the online registry.
  const configured = env.TF_CLI_CONFIG_FILE;
  if (configured && !fs.existsSync(configured)) {
    const tofurc = choice.toolchainConfig;
    return tofurc
      ? { path: choice.path, why: `${choice.why}; TF_CLI_CONFIG_FILE=${configured} names no file, so the toolchain's provider mirror is used instead`, cliConfig: tofurc }
      : { path: choice.path, why: `${choice.why}; warning: TF_CLI_CONFIG_FILE=${configured} names no file: the engine ignores it (no provider mirror, the registry is asked); unset it or point it at a file` };
  }
  return { path: choice.path, why: choice.why, cliConfig: choice.cliConfig };
}

/** The binary and why; for the toolchain's own engine, its CLI configuration (whether or not it is used). */
function chooseEngineBinary(wanted: string | undefined, env: NodeJS.ProcessEnv): EngineChoice & { readonly toolchainConfig?: string } {
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
  if (built && fs.existsSync(built)) {
    const tofurc = path.join(cache!, 'tofurc');
    const toolchainConfig = fs.existsSync(tofurc) ? tofurc : undefined;
    return {
      path: built,
      why: 'the OpenTofu npm run toolchain built',
      cliConfig: env.TF_CLI_CONFIG_FILE ? undefined : toolchainConfig,
      toolchainConfig,
    };
  }
  for (const name of ENGINE_NAMES) {
    const found = onPath(name, env);
    if (found) return { path: found, why: `${name} on PATH` };
  }
  throw new Error(`no engine found: ${ENGINE_NAMES.join(' or ')} is not on PATH and npm run toolchain has not built one; install OpenTofu or Terraform, run npm run toolchain, or pass --engine`);
}

/** The engine's own version line (`OpenTofu v1.12.6`), or undefined when it does not say. */
export function engineVersion(engine: string, env: NodeJS.ProcessEnv): string | undefined {
  const result = spawnSync(engine, ['version'], { env: { ...env, TF_IN_AUTOMATION: '1', CHECKPOINT_DISABLE: '1' }, encoding: 'utf8', timeout: 5_000 });
  return result.status === 0 ? result.stdout.split('\n')[0].trim() || undefined : undefined;
}

/**
 * The environment the engine runs with in a stack directory: the caller's, with `VAULT_ADDR` set to
 * the resolved store address (the vault provider reads only `VAULT_ADDR`), the `BAO_*` TLS
 * variables (`BAO_CACERT`, ...) copied to their `VAULT_*` names when those are unset (the provider
 * reads only those), `VAULT_TOKEN` from `BAO_TOKEN` / `SECRETSTORE_TOKEN` when it is unset (the
 * provider reads neither), and `VAULT_NAMESPACE` set to the namespace the tools resolved (so that
 * `BAO_NAMESPACE` reaches the provider as it reaches the tools' own requests). Refused when it holds
 * an engine variable that changes what the engine plans or applies, or where the state lives
 * (`ENGINE_ENVIRONMENT`, lib/engine/engine-environment-guard.ts): the guards review the engine's arguments, never its environment.
 * @throws EngineEnvironmentRefused (exit 4) naming each variable, its effect and the fix
 */
export function engineEnvironment(env: NodeJS.ProcessEnv, address: string, choice?: EngineChoice, namespace?: string): NodeJS.ProcessEnv {
  const token = (env.VAULT_TOKEN ?? '').trim() === '' ? [env.SECRETSTORE_TOKEN, env.BAO_TOKEN].map((t) => (t ?? '').trim()).find((t) => t !== '') : undefined;
  const built: NodeJS.ProcessEnv = {
    ...env,
    ...vaultTlsVariables(env),
    ...(choice?.cliConfig ? { TF_CLI_CONFIG_FILE: choice.cliConfig } : {}),
    ...(token ? { VAULT_TOKEN: token } : {}),
    ...(namespace ? { VAULT_NAMESPACE: namespace } : {}),
    VAULT_ADDR: address,
  };
  refuseEngineEnvironment(built);
  return built;
}
