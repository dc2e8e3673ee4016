import { spawnSync, SpawnSyncReturns } from 'child_process';
import { checkEngineRun } from './engine-process';

/** What the engine printed and how it ended, when a command reads its output instead of showing it. */
export interface EngineOutput {
  /** Exit status (1 when the engine was ended by a signal). */
  readonly status: number;
  /** Standard output as printed (`show -json`, `state list`). */
  readonly stdout: string;
  /** Standard error and output together, without colour codes, trimmed: for messages. */
  readonly said: string;
}

/**
 * Runs the engine in a stack directory to its end and returns its output, never printing it
 * (`state list` for adopt, `plan`/`show -json` for the replacement guard). `TF_IN_AUTOMATION` keeps
 * the engine from suggesting commands to type next. Checked first like every engine run, and run
 * in a working directory laid fresh ({@link checkEngineRun}).
 * @param options.readsConfiguration false for `show -json PLANFILE` of a review (see {@link checkEngineRun})
 * @throws the spawn error when the engine cannot be started; the refusals of {@link checkEngineRun}
 */
export function runEngineCollected(
  engine: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  options: { readonly readsConfiguration?: boolean } = {},
): EngineOutput {
  const { env: runEnv, work } = checkEngineRun(cwd, env, args, options.readsConfiguration ?? true);
  let result: SpawnSyncReturns<string>;
  try {
    result = spawnSync(engine, work.args, { cwd: work.dir, env: { ...runEnv, TF_IN_AUTOMATION: '1' }, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  } finally {
    // The engine's data (a plan saved with -out=, a changed lock) is back in `cwd` before the caller reads it.
    work.finish();
  }
  if (result.error) throw result.error;
  const said = `${result.stderr ?? ''}${result.stdout ?? ''}`.replace(/\x1b\[[0-9;]*m/g, '').trim();
  return { status: result.status ?? 1, stdout: result.stdout ?? '', said };
}
