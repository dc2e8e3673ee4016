/**
 * One agent or proxy container of the store tests, played by a generated entrypoint (entrypoint.sh,
 * proxy-entrypoint.sh) in a private directory, with its log in a file; and the polling the tests wait
 * with. Shared by agent.store.test.ts and api-proxy.store.test.ts.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pidsWhere } from './process-table';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value other than undefined. */
export async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Pids of the processes whose command line names `file` (the entrypoint's shell and its renew-self loop). */
export function processesRunning(file: string): number[] {
  return pidsWhere((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(file));
}

/** One agent (or proxy) container, played by its entrypoint in a private directory. */
export class AgentRun {
  readonly log: string;
  readonly entrypoint: string;
  private readonly child: ChildProcess;
  exitCode: number | null | undefined = undefined;
  private readonly exited: Promise<void>;

  constructor(entrypoint: string, env: NodeJS.ProcessEnv, home: string) {
    this.log = path.join(home, `${path.basename(entrypoint, '.sh')}.log`);
    this.entrypoint = entrypoint;
    const fd = fs.openSync(this.log, 'w', 0o600);
    this.child = spawn('sh', [entrypoint], { cwd: home, env: { PATH: process.env.PATH, HOME: home, ...env }, stdio: ['ignore', fd, fd] });
    fs.closeSync(fd);
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code) => {
        this.exitCode = code;
        resolve();
      }),
    );
  }

  /** The pid the entrypoint ran under: after its `exec`, the agent's or proxy's own. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The command line of that pid (`["vault", "proxy", "-config=..."]` once the entrypoint exec'd). */
  commandLine(): string[] {
    return fs.readFileSync(`/proc/${this.child.pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
  }

  logText(): string {
    return fs.readFileSync(this.log, 'utf8');
  }

  /** Resolves with the exit code, or throws after the timeout. */
  async exit(timeoutMs = 30_000): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('agent did not exit')), timeoutMs);
    });
    try {
      await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
    return this.exitCode ?? null;
  }

  /** Stops the process by its pid (the entrypoint exec'd it, so the pid is its own). */
  async stop(): Promise<void> {
    if (this.exitCode === undefined && this.child.pid !== undefined) {
      process.kill(this.child.pid, 'SIGTERM');
      await this.exit(15_000).catch(() => process.kill(this.child.pid!, 'SIGKILL'));
    }
  }
}
