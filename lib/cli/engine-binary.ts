import * as fs from 'fs';
import * as path from 'path';
import { vaultTlsVariables } from '../store/store-tls';

/**
 * Engines looked for on PATH, in this order, unless `--engine`, SECRETSTORE_IAC_ENGINE or
 * SECRETSTORE_IAC_TOFU (the engine scripts/toolchain.sh built) names one.
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

/**
 * The engine binary every command runs (`tf`, `adopt`): `wanted` (`--engine`: a path or a name on
 * PATH), else SECRETSTORE_IAC_ENGINE, else SECRETSTORE_IAC_TOFU, else tofu, else terraform on PATH.
 * One function for all of them, so that the engine that reads a stack's state is the one that applies it.
 * @throws Error naming what was looked for
 */
export function findEngine(wanted: string | undefined, env: NodeJS.ProcessEnv): string {
  const name = wanted ?? (env.SECRETSTORE_IAC_ENGINE || env.SECRETSTORE_IAC_TOFU || undefined);
  const engine = name ? onPath(name, env) : ENGINE_NAMES.map((e) => onPath(e, env)).find(Boolean);
  if (!engine) {
    throw new Error(`no engine found: ${name ?? ENGINE_NAMES.join(' or ')} is not on PATH; install OpenTofu or Terraform, or pass --engine`);
  }
  return engine;
}

/**
 * The environment the engine runs with in a stack directory: the caller's, with `VAULT_ADDR` set to
 * the resolved store address (the vault provider reads only `VAULT_ADDR`), and the `BAO_*` TLS
 * variables (`BAO_CACERT`, ...) copied to their `VAULT_*` names when those are unset (the provider
 * reads only those).
 */
export function engineEnvironment(env: NodeJS.ProcessEnv, address: string): NodeJS.ProcessEnv {
  return { ...env, ...vaultTlsVariables(env), VAULT_ADDR: address };
}
