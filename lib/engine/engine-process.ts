import { spawn } from 'child_process';
import * as os from 'os';
import { refuseEngineEnvironment } from './engine-environment-guard';
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
 * What every engine run of the tool is checked for, right before the engine starts (whoever asked
 * for it: `tf`, guarded or not, `adopt`, the guards' own plans and state reads): an environment that
 * changes what the engine plans or applies out of the guards' sight, and files in the directory it
 * runs in that no review covers.
 * @param readsConfiguration false for a command that reads no configuration file of the directory
 *   (`show -json PLANFILE`: a saved plan carries its own snapshot of the configuration), whose
 *   directory is then not checked: the review of a plan made from a tampered directory must still
 *   read what that plan would apply
 * @throws EngineEnvironmentRefused, UntrustedStackDirectory (exit 4): the engine is not started
 */
export function checkEngineRun(cwd: string, env: NodeJS.ProcessEnv, readsConfiguration = true): void {
  refuseEngineEnvironment(env);
  if (readsConfiguration) refuseUntrustedStackDirectory(cwd);
}

/**
 * Runs the engine to its end, once {@link checkEngineRun} passed (else the promise is rejected with
 * its refusal, nothing started). With {@link CommandContext.inheritStdio} it shares the terminal (a
 * collected output could never show apply's approval prompt, and a piped standard input answers it
 * with EOF); otherwise its output goes to the context line by line, as it is written.
 */
export function runEngine(engine: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, context: EngineIo): Promise<number> {
  return new Promise((resolve, reject) => {
    checkEngineRun(cwd, env);
    const child = spawn(engine, args, { cwd, env, stdio: context.inheritStdio ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
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
      reject(error);
    });
    child.on('close', (code, signal) => {
      process.off('SIGINT', ignore);
      flushOut();
      flushErr();
      resolve(code ?? (signal ? 128 + (signalNumber(signal) ?? 0) : NO_EXIT_CODE));
    });
  });
}

/** The number of a signal (`SIGINT` → 2), for the shell's 128+N exit code convention. */
function signalNumber(signal: NodeJS.Signals): number | undefined {
  return os.constants.signals[signal];
}
