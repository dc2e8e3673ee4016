import * as path from 'path';

/**
 * The toolchain cache of scripts/toolchain.sh (`SECRETSTORE_IAC_CACHE`, else `~/.cache/secretstore-iac`):
 * the OpenTofu it built (`bin/tofu`) and its provider mirror (`provider-mirror/`), docs/toolchain.md.
 */
export function toolchainCache(env: NodeJS.ProcessEnv): string | undefined {
  if (env.SECRETSTORE_IAC_CACHE) return env.SECRETSTORE_IAC_CACHE;
  return env.HOME ? path.join(env.HOME, '.cache', 'secretstore-iac') : undefined;
}

/** The folder of the toolchain cache that holds the provider mirror scripts/toolchain.sh built. */
export const TOOLCHAIN_MIRROR_DIR = 'provider-mirror';
