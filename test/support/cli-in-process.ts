import { runCli } from '../../lib/cli/run-cli';

/** What one in-process run of the CLI printed and returned. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI in this process in `cwd` (no terminal, an empty environment): its exit code and output. */
export async function runCliIn(cwd: string, args: readonly string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli([...args], { env: {}, cwd, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}
