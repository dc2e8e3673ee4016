import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { CliRun, storeCliEnvironment, StoreCliOptions } from './store-cli';

/** A CLI run in its own process: the process, and its end. */
export interface CliProcess {
  /** The CLI's process; the leader of its own process group (a terminal's Ctrl-C reaches the group). */
  readonly child: ChildProcess;
  /** Resolves when it ended: exit code (128 + signal number when killed), output. */
  readonly done: Promise<CliRun & { readonly signal: NodeJS.Signals | null }>;
}

/**
 * Starts `secretstore-iac ARGS` as its own process (from the sources, test/support/store/cli-process-runner.js),
 * in its own process group, with the environment {@link runStoreCli} gives: for tests that kill the
 * CLI (SIGKILL to it, or SIGINT to its group as Ctrl-C in a terminal does).
 */
export function spawnStoreCli(args: readonly string[], options: StoreCliOptions): CliProcess {
  const child = spawn(process.execPath, [path.join(__dirname, 'cli-process-runner.js'), ...args], {
    cwd: options.cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: storeCliEnvironment(options),
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<CliRun & { signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code: code ?? 128, signal, stdout: stdout.trimEnd(), stderr: stderr.trimEnd() }));
  });
  return { child, done };
}
