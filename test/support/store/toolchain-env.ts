/**
 * Locates the binaries built by scripts/toolchain.sh.
 *
 * Order: the process environment (SECRETSTORE_IAC_BAO, SECRETSTORE_IAC_VAULT, SECRETSTORE_IAC_TOFU,
 * and a TF_CLI_CONFIG_FILE that exists), then $CACHE/toolchain.env written by the script.
 * SECRETSTORE_IAC_STORE (`openbao`, the default, or `vault`) selects the store the tests run against:
 * its server binary is also its agent and CLI.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The store kinds the store suite runs against. */
export type StoreKind = 'openbao' | 'vault';

/** The store selected by SECRETSTORE_IAC_STORE (default `openbao`). */
export function storeKind(): StoreKind {
  const kind = process.env.SECRETSTORE_IAC_STORE || 'openbao';
  if (kind !== 'openbao' && kind !== 'vault') {
    throw new Error(`SECRETSTORE_IAC_STORE=${kind}: must be "openbao" or "vault"`);
  }
  return kind;
}

export interface Toolchain {
  /** The selected store's kind (SECRETSTORE_IAC_STORE). */
  store: StoreKind;
  /**
   * The selected store's binary: its server, agent and CLI (OpenBao `bao` or HashiCorp `vault`).
   * The name is historical: it is `vault` when SECRETSTORE_IAC_STORE=vault.
   */
  bao: string;
  /** Engine binary (OpenTofu `tofu`). */
  tofu: string;
  /** CLI config that installs providers only from the local filesystem mirror. */
  cliConfig: string;
  /** Provider plugin cache (TF_PLUGIN_CACHE_DIR), one per store. */
  pluginCacheDir: string;
  cacheDir: string;
}

export function cacheDir(): string {
  return process.env.SECRETSTORE_IAC_CACHE || path.join(os.homedir(), '.cache', 'secretstore-iac');
}

const KEYS = ['SECRETSTORE_IAC_BAO', 'SECRETSTORE_IAC_VAULT', 'SECRETSTORE_IAC_TOFU', 'TF_CLI_CONFIG_FILE'] as const;

/** Reads toolchain.env through bash, so any quoting the script used is undone correctly. */
function readToolchainEnv(file: string): Partial<Record<(typeof KEYS)[number], string>> {
  if (!fs.existsSync(file)) return {};
  const script = `set -e; source "$1"; printf '%s\\0' ${KEYS.map((k) => `"\${${k}:-}"`).join(' ')}`;
  const out = execFileSync('bash', ['-c', script, 'toolchain-env', file], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  const values = out.split('\0');
  const result: Partial<Record<(typeof KEYS)[number], string>> = {};
  KEYS.forEach((k, i) => {
    if (values[i]) result[k] = values[i];
  });
  return result;
}

let cached: Toolchain | undefined;

export function toolchain(): Toolchain {
  if (cached) return cached;
  const dir = cacheDir();
  const envFile = path.join(dir, 'toolchain.env');
  const fromFile = readToolchainEnv(envFile);
  const pick = (key: (typeof KEYS)[number]): string | undefined => {
    const v = process.env[key];
    if (v && fs.existsSync(v)) return v;
    return fromFile[key];
  };
  const store = storeKind();
  const storeVar = store === 'vault' ? 'SECRETSTORE_IAC_VAULT' : 'SECRETSTORE_IAC_BAO';
  const bao = pick(storeVar);
  const tofu = pick('SECRETSTORE_IAC_TOFU');
  const cliConfig = fromFile.TF_CLI_CONFIG_FILE ?? pick('TF_CLI_CONFIG_FILE');
  const missing = [
    [storeVar, bao],
    ['SECRETSTORE_IAC_TOFU', tofu],
    ['TF_CLI_CONFIG_FILE', cliConfig],
  ]
    .filter(([, v]) => !v || !fs.existsSync(v))
    .map(([k]) => k);
  if (missing.length > 0) {
    throw new Error(
      `store toolchain not found (${missing.join(', ')}): run \`bash scripts/toolchain.sh\` ` +
        `(reads/writes ${envFile}) or set the variables`,
    );
  }
  // One cache per store and lane: scripts/test-store.sh runs two lanes side by side (each may run
  // files of either store: scripts/store-lanes.js), and two engines installing into one plugin cache
  // at once race (one of them fails).
  const lane = process.env.SECRETSTORE_IAC_STORE_LANE;
  const pluginCacheDir = path.join(dir, 'plugin-cache', lane && /^lane-\d+$/.test(lane) ? `${store}-${lane}` : store);
  fs.mkdirSync(pluginCacheDir, { recursive: true });
  cached = { store, bao: bao!, tofu: tofu!, cliConfig: cliConfig!, pluginCacheDir, cacheDir: dir };
  return cached;
}
