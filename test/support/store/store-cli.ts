import { runCli } from '../../../lib/cli/run-cli';
import { toolchain } from './toolchain-env';

/** What one run of the CLI printed, and its exit code. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Where and against what a store test runs the CLI. */
export interface StoreCliOptions {
  /** Working directory (the fixture's directory, holding `cdktf.out`). */
  readonly cwd: string;
  /** The store's address (`SECRETSTORE_ADDR`). */
  readonly addr: string;
  /** `VAULT_TOKEN`, when the command needs one. */
  readonly token?: string;
  /** More environment (TLS variables, `PG_CONN_STR`, ...); wins over the defaults. */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Runs `secretstore-iac ARGS` in this process as an operator's shell would: only PATH and HOME of
 * the test's environment, the store's address and token, and the Go-built engine with its provider
 * mirror (no registry).
 */
export async function runStoreCli(args: readonly string[], options: StoreCliOptions): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, {
    env: storeCliEnvironment(options),
    cwd: options.cwd,
    isTerminal: false,
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/**
 * The environment of an operator's shell for the CLI: only PATH and HOME of the test's, the store's
 * address and token, the Go-built engine with its provider mirror (no registry), then `options.env`.
 */
export function storeCliEnvironment(options: StoreCliOptions): NodeJS.ProcessEnv {
  const tools = toolchain();
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    SECRETSTORE_ADDR: options.addr,
    ...(options.token !== undefined ? { VAULT_TOKEN: options.token } : {}),
    TF_CLI_CONFIG_FILE: tools.cliConfig,
    // Where the tool finds its provider mirror (an engine run writes its own CLI configuration, issue 45).
    SECRETSTORE_IAC_CACHE: tools.cacheDir,
    TF_IN_AUTOMATION: '1',
    SECRETSTORE_IAC_ENGINE: tools.tofu,
    ...options.env,
  };
}
