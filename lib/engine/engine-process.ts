import { spawn } from 'child_process';
import * as os from 'os';
import { engineProcessEnvironment } from './engine-run-environment';
import { EngineWorkingDirectory, layEngineWorkingDirectory } from './engine-working-directory';
import { refuseUntrustedStackDirectory } from './stack-directory-guard';

/** Where an engine run's output goes, and whether it may share the terminal (a `CommandContext` is one). */
export interface EngineIo {
  /** Writes one line of the engine's standard output. */
  stdout(line: string): void;
  /** Writes one line of the engine's standard error. */
  stderr(line: string): void;
  /** True when the engine may share this process's standard streams (prompts answered, output live). */
  readonly inheritStdio?: boolean;
}

/** Exit code when the engine ended without one and without a signal (the CLI's runtime error). */
const NO_EXIT_CODE = 3;

/**
 * What every engine start of the tool goes through, right before the engine starts (whoever asked
 * for it: `tf`, guarded or not, `adopt`, the guards' own plans and state reads): the environment is
 * an engine run's, built from an allowlist ({@link engineProcessEnvironment}), the directory
 * `cwd` holds nothing but what the synthesis, the tool and the engine wrote, and the engine runs in
 * a working directory laid fresh from it ({@link layEngineWorkingDirectory}): only the synthesis's
 * and the tool's files, the bookkeeping checked against its seal on the very copies, and links to
 * the engine's data. No other file of `cwd` can be read, whenever it appeared.
 * @param readsConfiguration false for a command that reads no configuration file of the directory
 *   (`show -json PLANFILE`: a saved plan carries its own snapshot of the configuration), whose
 *   directory is then not checked and whose fresh directory holds the engine's data only: the
 *   review of a plan made from a tampered directory must still read what that plan would apply
 * @returns the environment to start the engine with, and its working directory (call
 *   {@link EngineWorkingDirectory.finish} once the engine ended, or was not started)
 * @throws UntrustedStackDirectory (exit 4): the engine is not started; Error when `env` was not
 *   built by `buildEngineRunEnvironment`
 */
export function checkEngineRun(
  cwd: string,
  env: NodeJS.ProcessEnv,
  args: readonly string[],
  readsConfiguration = true,
): { readonly env: NodeJS.ProcessEnv; readonly work: EngineWorkingDirectory } {
  const runEnv = engineProcessEnvironment(env);
  if (readsConfiguration) refuseUntrustedStackDirectory(cwd);
  return { env: runEnv, work: layEngineWorkingDirectory(cwd, args, readsConfiguration) };
}

/**
 * Runs the engine to its end, once {@link checkEngineRun} passed (else the promise is rejected with
 * its refusal, nothing started), in the fresh working directory it laid; the engine's data is back
 * in `cwd` when the promise settles. With {@link CommandContext.inheritStdio} it shares the terminal (a
 * collected output could never show apply's approval prompt, and a piped standard input answers it
 * with EOF); otherwise its output goes to the context line by line, as it is written.
 */
export function runEngine(engine: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, context: EngineIo): Promise<number> {
  return new Promise((resolve, reject) => {
    const { env: runEnv, work } = checkEngineRun(cwd, env, args);
    // The engine's data is back in the stack directory before the caller sees the run's end.
    const finish = (): Error | undefined => {
      try {
        work.finish();
        return undefined;
      } catch (e) {
        return e as Error;
      }
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(engine, work.args, { cwd: work.dir, env: runEnv, stdio: context.inheritStdio ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      finish();
      throw e;
    }
    const forward = (stream: NodeJS.ReadableStream | null, write: (line: string) => void) => {
      if (!stream) return () => undefined;
      let pending = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (pending + chunk).split('\n');
        pending = lines.pop() ?? '';
        lines.forEach((line) => write(line));
      });
      return () => {
        if (pending) write(pending);
      };
    };
    const flushOut = forward(child.stdout, (l) => context.stdout(l));
    const flushErr = forward(child.stderr, (l) => context.stderr(l));
    // Ctrl-C reaches the engine too (same process group): let it stop cleanly (state unlocked)
    // instead of leaving it behind while the shell prompt comes back.
    const ignore = () => undefined;
    if (context.inheritStdio) process.on('SIGINT', ignore);
    child.on('error', (error) => {
      process.off('SIGINT', ignore);
      finish();
      reject(error);
    });
    child.on('close', (code, signal) => {
      process.off('SIGINT', ignore);
      flushOut();
      flushErr();
      const failed = finish();
      if (failed !== undefined) reject(failed);
      else resolve(code ?? (signal ? 128 + (signalNumber(signal) ?? 0) : NO_EXIT_CODE));
    });
  });
}

/** The number of a signal (`SIGINT` → 2), for the shell's 128+N exit code convention. */
function signalNumber(signal: NodeJS.Signals): number | undefined {
  return os.constants.signals[signal];
}
