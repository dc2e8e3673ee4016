import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { makeOwnedDirectory, OwnedDirectoryKind, removeOwnedDirectoryLeftovers } from '../private/dead-process-leftovers';
import { processRunning } from '../private/process-running';
import { CDKTF_CONFIG_FILE, readCdktfAppCommand } from './cdktf-app-command';
import { lockedLibrary, lockedLibraryIn } from './locked-library';
import { SynthesisIdentity } from './synthesis-cache';

/** A configuration synthesized from a git ref into a temporary directory. */
export interface SynthesizedRef {
  /** The cdktf output directory. */
  readonly outdir: string;
  /** The commit synthesized. */
  readonly commit: string;
  /** Deletes the temporary directory. */
  dispose(): void;
}

/**
 * The temporary directory of one ref's synthesis (`$TMPDIR/secretstore-iac-ref-<pid>-XXXXXX`: its
 * worktree and its output), named after the process that owns it and holding an owner file with its
 * pid: a run killed during the synthesis (SIGKILL, a cancelled CI job) cannot remove it, and the next
 * synthesis removes it ({@link removeRefDirectoryLeftovers}).
 */
export const REF_DIRECTORY: OwnedDirectoryKind = { prefix: 'secretstore-iac-ref-', ownerFile: '.secretstore-iac-ref-owner' };

/**
 * The ref synthesis directories in `tmp` whose process no longer runs (only those with the owner
 * file naming the pid of their name, this user's), sorted; with `remove`, deletes them. The git
 * worktree registered for such a directory is pruned by the next synthesis (`git worktree prune`).
 */
export function removeRefDirectoryLeftovers(remove: boolean, tmp: string = os.tmpdir(), running: (pid: number) => boolean = processRunning): string[] {
  return removeOwnedDirectoryLeftovers(remove, tmp, REF_DIRECTORY, running);
}

/**
 * The commit a git ref names in `repo`, or undefined when it names none (or `repo` is no git
 * checkout).
 */
export async function resolveGitCommit(ref: string, repo: string): Promise<string | undefined> {
  if (ref.startsWith('-')) return undefined;
  const result = await run('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], repo);
  return result.code === 0 ? result.output.trim() : undefined;
}

/**
 * What the synthesis of a commit depends on ({@link synthesizeGitRef}): the commit's git tree, and
 * the library it is synthesized with: the `secretstore-iac` the commit's package-lock.json locks when
 * it differs from the checkout's (then {@link synthesizeGitRef} installs it), else the checkout's (or,
 * when the checkout's lock has none, as in this library's own repository, `runningLibrary`: there the
 * tree holds the library's sources).
 * @param runningLibrary the version of the library running (the CLI's)
 * @throws Error when `commit` names no commit of `repo`
 */
export async function synthesisIdentity(commit: string, repo: string, runningLibrary: string): Promise<SynthesisIdentity> {
  const tree = await run('git', ['rev-parse', '--verify', '--quiet', `${commit}^{tree}`], repo);
  if (tree.code !== 0) throw new Error(`${commit} names no commit of ${repo}`);
  const top = (await run('git', ['rev-parse', '--show-toplevel'], repo)).output.trim();
  const lock = await run('git', ['show', `${commit}:package-lock.json`], repo);
  const locked = lock.code === 0 ? lockedLibraryIn(lock.output) : undefined;
  const installed = lockedLibrary(top);
  const library = locked !== undefined && locked.identity !== installed?.identity ? locked.identity : (installed?.identity ?? `secretstore-iac ${runningLibrary}`);
  return { tree: tree.output.trim(), library };
}

/**
 * Synthesizes the stacks of a commit: checks it out into a temporary `git worktree` (the working
 * copy is left alone; the directory is {@link REF_DIRECTORY}'s, and the leftovers of killed syntheses
 * are removed first), links the checkout's `node_modules` into it (or, when the commit's
 * package-lock.json installs another `secretstore-iac` than the checkout's, installs the commit's
 * own with `npm ci`: an upgrade is reviewed with the version on each side), runs the commit's own synthesis
 * command (the `app` field of its cdktf.json) with `CDKTF_OUTDIR` pointing outside the worktree, and
 * removes the worktree again, whatever happens.
 *
 * @param repo the main checkout (its `node_modules` is used)
 * @param progress receives one line per step, for a terminal
 * @param temporary where the temporary directory goes (the system's temporary directory)
 * @throws Error with the tail of the failing step's output
 */
export async function synthesizeGitRef(
  commit: string,
  repo: string,
  progress: (line: string) => void = () => undefined,
  temporary: string = os.tmpdir(),
): Promise<SynthesizedRef> {
  const top = (await run('git', ['rev-parse', '--show-toplevel'], repo)).output.trim();
  for (const left of removeRefDirectoryLeftovers(true, temporary)) progress(`removed ${left}: a synthesis killed before it ended left it (its process no longer runs)`);
  const tmp = makeOwnedDirectory(temporary, REF_DIRECTORY);
  const worktree = path.join(tmp, 'worktree');
  const outdir = path.join(tmp, 'cdktf.out');
  const dispose = () => fs.rmSync(tmp, { recursive: true, force: true });
  try {
    progress(`synthesizing ${commit.slice(0, 12)} in a temporary worktree`);
    await step('git', ['worktree', 'add', '--detach', worktree, commit], top, 'git worktree add');
    try {
      if (!fs.existsSync(path.join(worktree, CDKTF_CONFIG_FILE))) {
        throw new Error(`commit ${commit.slice(0, 12)} has no ${CDKTF_CONFIG_FILE} to synthesize`);
      }
      const app = readCdktfAppCommand(worktree);
      const library = lockedLibrary(worktree);
      const installed = lockedLibrary(top);
      if (library !== undefined && library.identity !== installed?.identity) {
        // An upgrade of the library under review: the commit is synthesized with the version it locks,
        // not the checkout's, or access-diff would compare the new version with itself.
        progress(`${commit.slice(0, 12)} locks secretstore-iac ${library.version} (this checkout: ${installed?.version ?? 'none'}): installing its dependencies (npm ci)`);
        await step('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], worktree, 'npm ci');
      } else {
        const modules = path.join(top, 'node_modules');
        if (!fs.existsSync(modules)) throw new Error(`${modules} is missing: run npm ci in ${top} first`);
        fs.symlinkSync(modules, path.join(worktree, 'node_modules'), 'dir');
      }
      // `app` is a shell command line (`npx tsc ... && node ...`), as cdktf runs it.
      await step('sh', ['-c', app], worktree, `synthesis (${app})`, { CDKTF_OUTDIR: outdir });
    } finally {
      await run('git', ['worktree', 'remove', '--force', worktree], top);
      await run('git', ['worktree', 'prune'], top);
    }
    return { outdir, commit, dispose };
  } catch (e) {
    dispose();
    throw e;
  }
}

async function step(command: string, args: readonly string[], cwd: string, label: string, env: NodeJS.ProcessEnv = {}): Promise<void> {
  const result = await run(command, args, cwd, env);
  if (result.code !== 0) {
    const tail = result.output.trim().split('\n').slice(-20).join('\n');
    throw new Error(`${label} failed (exit ${result.code}):\n${tail}`);
  }
}

function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (e) => resolve({ code: 127, output: `${command}: ${e.message}` }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}
