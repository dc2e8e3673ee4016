/**
 * Runs the real engine (OpenTofu, built by scripts/toolchain.sh) in a working directory,
 * against a RunningStore, with providers installed only from the local filesystem mirror.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pidsWhere } from './process-table';
import type { RunningStore } from './store-server';
import { toolchain } from './toolchain-env';

/** The engines the pipeline store tests apply with: OpenTofu from the toolchain, and Terraform 1.11.4 (`SECRETSTORE_IAC_TERRAFORM`). */
export const TEST_ENGINES: readonly { readonly engine: string; readonly binary: () => string }[] = [
  { engine: 'OpenTofu', binary: () => toolchain().tofu },
  { engine: 'Terraform 1.11.4', binary: () => process.env.SECRETSTORE_IAC_TERRAFORM || '/usr/local/bin/terraform' },
];

export interface EngineResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface EngineOptions {
  /** Sets VAULT_ADDR and VAULT_TOKEN (root token unless `token` is given). */
  store?: Pick<RunningStore, 'addr' | 'rootToken'>;
  /** Token for VAULT_TOKEN instead of the store's root token. */
  token?: string;
  /** Extra environment (wins over everything else; `undefined` removes a variable). */
  env?: Record<string, string | undefined>;
  /** Exit codes that are not errors. Default [0]; e.g. [0, 2] for `plan -detailed-exitcode`. */
  allowCodes?: number[];
  /** Kill the engine after this long. Default 10 minutes. */
  timeoutMs?: number;
  /** Engine binary; default the toolchain's. */
  binary?: string;
  /** Called with the engine's pid once it runs (to kill it part-way, as a cancelled CI job does). */
  onSpawn?: (pid: number) => void;
  /** Called with each chunk of the engine's output as it is written (to act part-way through an apply). */
  onOutput?: (text: string, stream: 'stdout' | 'stderr') => void;
}

/** Subcommands that take -input=false / -no-color. */
const INPUT_CMDS = new Set(['init', 'plan', 'apply', 'destroy', 'import', 'refresh']);
const NO_COLOR_CMDS = new Set([
  'init', 'plan', 'apply', 'destroy', 'import', 'refresh', 'validate', 'output', 'show', 'console', 'test',
]);

/** Inherited variables that would change what the engine or the provider does. */
function inheritedEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(TF_|VAULT_|BAO_)/.test(k)) continue;
    env[k] = v;
  }
  return env;
}

export async function runEngine(workDir: string, args: string[], options: EngineOptions = {}): Promise<EngineResult> {
  const tc = toolchain();
  const binary = options.binary ?? tc.tofu;
  const allowCodes = options.allowCodes ?? [0];
  const timeoutMs = options.timeoutMs ?? 600_000;

  const finalArgs = [...args];
  const sub = finalArgs[0];
  if (sub && INPUT_CMDS.has(sub) && !finalArgs.some((a) => a.startsWith('-input'))) {
    finalArgs.splice(1, 0, '-input=false');
  }
  if (sub && NO_COLOR_CMDS.has(sub) && !finalArgs.includes('-no-color')) {
    finalArgs.splice(1, 0, '-no-color');
  }

  const env: NodeJS.ProcessEnv = {
    ...inheritedEnv(),
    TF_CLI_CONFIG_FILE: tc.cliConfig,
    TF_PLUGIN_CACHE_DIR: tc.pluginCacheDir,
    TF_IN_AUTOMATION: '1',
    CHECKPOINT_DISABLE: '1',
  };
  if (options.store) {
    env.VAULT_ADDR = options.store.addr;
    env.VAULT_TOKEN = options.token ?? options.store.rootToken;
  } else if (options.token) {
    env.VAULT_TOKEN = options.token;
  }
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }

  const result = await new Promise<EngineResult & { timedOut: boolean }>((resolve, reject) => {
    const child = spawn(binary, finalArgs, { cwd: workDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => {
      out.push(b);
      options.onOutput?.(b.toString('utf8'), 'stdout');
    });
    child.stderr.on('data', (b: Buffer) => {
      err.push(b);
      options.onOutput?.(b.toString('utf8'), 'stderr');
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${binary}: ${e.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        timedOut,
      });
    });
  });

  const { timedOut, ...res } = result;
  if (timedOut || !allowCodes.includes(res.code)) {
    const why = timedOut ? `timed out after ${timeoutMs} ms` : `exited with ${res.code}`;
    throw new Error(
      `engine \`${path.basename(binary)} ${finalArgs.join(' ')}\` in ${workDir} ${why}\n--- stdout\n${res.stdout}\n--- stderr\n${res.stderr}`,
    );
  }
  return res;
}

/**
 * Kills the processes left working in `dir`: an engine killed with SIGKILL (as a cancelled CI job's)
 * leaves its provider plugin running, orphaned, since the plugin does not watch its parent.
 * Returns their pids. Call it before the directory is removed (the link then reads "(deleted)").
 */
export function killProcessesWorkingIn(dir: string): number[] {
  const root = fs.realpathSync(dir);
  const working = pidsWhere((pid) => {
    const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
    return cwd === root || cwd.startsWith(root + path.sep);
  });
  return working.filter((pid) => {
    try {
      process.kill(pid, 'SIGKILL');
      return true;
    } catch {
      return false; // already ended
    }
  });
}
