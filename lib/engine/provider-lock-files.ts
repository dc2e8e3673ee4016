import * as fs from 'fs';
import * as path from 'path';
import { CDKTF_CONFIG_FILE } from '../sources/cdktf-app-command';

/** The engine's dependency lock file: the provider versions and checksums `init` selected. */
export const PROVIDER_LOCK_FILE = '.terraform.lock.hcl';

/**
 * Directory, beside `cdktf.json`, where a configuration repository commits its stacks' lock files:
 * `locks/<stack>/.terraform.lock.hcl`. The engine writes its lock in the stack's directory inside
 * the output directory, which is not committed (synthesis owns it).
 */
export const PROVIDER_LOCKS_DIR = 'locks';

/**
 * The committed lock file of the stack synthesized at `stackDir` (`<outdir>/stacks/<stack>`):
 * `locks/<stack>/.terraform.lock.hcl` in the repository holding the output directory, that is the
 * output directory's parent when it holds `cdktf.json`; undefined when it does not (an output
 * directory outside a configuration repository: the engine's lock stays in the stack directory).
 */
export function committedProviderLockFile(stackDir: string): string | undefined {
  const stack = path.basename(stackDir);
  const repository = path.dirname(path.dirname(path.dirname(stackDir)));
  if (!fs.existsSync(path.join(repository, CDKTF_CONFIG_FILE))) return undefined;
  return path.join(repository, PROVIDER_LOCKS_DIR, stack, PROVIDER_LOCK_FILE);
}

function readIfFile(file: string): Buffer | undefined {
  return fs.existsSync(file) && fs.statSync(file).isFile() ? fs.readFileSync(file) : undefined;
}

/** Replaces `file` by a rename, so that a reader never sees it half-written. */
function writeWhole(file: string, content: Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const staging = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(staging, content);
  fs.renameSync(staging, file);
}

/**
 * Puts the stack's committed lock file ({@link committedProviderLockFile}) in the stack directory
 * when it differs from the one there (the committed one wins over what an earlier run left), so
 * that the lock checked before the engine runs is the one it reads.
 * @returns the committed lock's contents, or undefined when there is none
 */
export function placeCommittedLock(stackDir: string): Buffer | undefined {
  const committed = committedProviderLockFile(stackDir);
  const before = committed === undefined ? undefined : readIfFile(committed);
  const working = path.join(stackDir, PROVIDER_LOCK_FILE);
  if (before !== undefined && !before.equals(readIfFile(working) ?? Buffer.alloc(0))) writeWhole(working, before);
  return before;
}

/** Checks of the providers around an engine run ({@link keepProviderLockFile}); each throws to refuse. */
export interface ProviderChecks {
  /** Before the engine runs, the committed lock in place. */
  readonly before?: () => void;
  /**
   * After a successful run that may have written the lock or installed packages (`init`), before its
   * lock is copied to the committed one: a refused lock is put back as it was, and not committed.
   */
  readonly after?: () => void;
}

/**
 * Runs the engine in `stackDir` with the stack's committed lock file (see
 * {@link committedProviderLockFile}): copied into the stack directory before the engine runs (the
 * committed one wins over what an earlier run left there), and copied back when the engine ended
 * successfully with another lock (`init` selected or upgraded a provider, `providers lock` added
 * checksums) that `checks.after` accepts, with one line through `say` asking to commit it (in a
 * CI job, whose working copy the repository never receives, how to make it in a checkout instead).
 *
 * @param run runs the engine and returns its exit code
 * @param ciJob the run is a CI job's (`CI` / `GITLAB_CI` set): a lock written there is lost with the job
 * @returns the engine's exit code
 */
export async function keepProviderLockFile(
  stackDir: string,
  say: (line: string) => void,
  run: () => Promise<number>,
  checks: ProviderChecks = {},
  ciJob = false,
): Promise<number> {
  const committed = committedProviderLockFile(stackDir);
  const working = path.join(stackDir, PROVIDER_LOCK_FILE);
  const before = placeCommittedLock(stackDir);
  const left = readIfFile(working);
  checks.before?.();
  const code = await run();
  if (code === 0 && checks.after !== undefined) {
    try {
      checks.after();
    } catch (e) {
      // The lock the run wrote is not kept for the next run to trust.
      if (left === undefined) fs.rmSync(working, { force: true });
      else writeWhole(working, left);
      throw e;
    }
  }
  if (committed === undefined) return code;
  const after = code === 0 ? readIfFile(working) : undefined;
  if (after !== undefined && (before === undefined || !after.equals(before))) {
    writeWhole(committed, after);
    say(`secretstore-iac tf: the engine ${before === undefined ? 'wrote' : 'changed'} the provider lock file: copied to ${shownLock(committed)}; ${commitAdvice(committed, ciJob)}`);
  }
  // A stack that no administrator initialized (people, a shard, one added later) would otherwise get
  // its lock only in a pipeline job, where it is lost: every synthesized stack gets one now.
  if (code === 0) {
    for (const written of deriveSiblingLockFiles(stackDir)) say(`secretstore-iac tf: wrote ${shownLock(written)} from this stack's provider lock (the same provider builds); ${commitAdvice(written, ciJob)}`);
  }
  return code;
}

/**
 * What to do with a lock written to `locks/<stack>/`: commit it; in a CI job, whose working copy
 * the repository never receives, make it in a checkout (`tf <stack> -- init`) and commit it there.
 */
function commitAdvice(committed: string, ciJob: boolean): string {
  if (!ciJob) return 'commit it';
  const stack = path.basename(path.dirname(committed));
  return `this CI job's working copy is not committed: run \`npx secretstore-iac tf ${stack} -- init\` in a checkout and commit locks/${stack}/`;
}

/** A committed lock file's path as the repository shows it (`locks/people/.terraform.lock.hcl`). */
function shownLock(committed: string): string {
  return path.relative(path.dirname(path.dirname(path.dirname(committed))), committed);
}

/**
 * The version constraint of each provider a synthesized stack requires, by local name
 * (`{ vault: '>= 5.6.0, < 6.0.0' }`), from its `cdk.tf.json`; undefined when it cannot be read.
 */
function requiredProviders(stackDir: string): Record<string, { source: string; version: string }> | undefined {
  try {
    const json = JSON.parse(fs.readFileSync(path.join(stackDir, 'cdk.tf.json'), 'utf8')) as { terraform?: { required_providers?: Record<string, { source?: unknown; version?: unknown }> } };
    const required = json.terraform?.required_providers ?? {};
    const out: Record<string, { source: string; version: string }> = {};
    for (const [name, p] of Object.entries(required)) {
      if (typeof p?.version !== 'string') return undefined;
      out[name] = { source: typeof p.source === 'string' ? p.source : name, version: p.version };
    }
    return out;
  } catch {
    return undefined;
  }
}

/** A provider block of a lock file: its address (`registry.opentofu.org/hashicorp/vault`), version and whole text. */
interface LockedProvider {
  readonly address: string;
  readonly version: string;
  readonly text: string;
}

/** The provider blocks of a lock file's text (the engine writes one block per provider, fields one per line). */
function lockedProviders(lock: string): LockedProvider[] {
  const providers: LockedProvider[] = [];
  for (const m of lock.matchAll(/^provider "([^"]+)" \{\n([\s\S]*?)^\}\n?/gm)) {
    const version = /^\s*version\s*=\s*"([^"]+)"/m.exec(m[2])?.[1];
    if (version !== undefined) providers.push({ address: m[1], version, text: m[0].endsWith('\n') ? m[0] : `${m[0]}\n` });
  }
  return providers;
}

/**
 * The lock file of a stack requiring `required`, made from another stack's lock `lock` of the same
 * providers: the same versions and checksums, with the stack's own constraints (the engine keeps a
 * lock whose constraints are the configuration's). Undefined when a required provider is not in the
 * lock, or its locked version does not satisfy the stack's constraint (the engine must choose then).
 */
export function derivedProviderLock(lock: string, required: Readonly<Record<string, { source: string; version: string }>>): string | undefined {
  const providers = lockedProviders(lock);
  const header = lock.slice(0, lock.search(/^provider "/m) < 0 ? 0 : lock.search(/^provider "/m));
  const blocks: string[] = [];
  for (const { source, version } of Object.values(required)) {
    // `hashicorp/vault`, or a bare local name (`vault`, which the engines read as hashicorp/vault).
    const wanted = source.includes('/') ? source.toLowerCase() : `hashicorp/${source.toLowerCase()}`;
    const locked = providers.find((p) => p.address.toLowerCase() === wanted || p.address.toLowerCase().endsWith(`/${wanted}`));
    if (locked === undefined || !satisfiesConstraint(locked.version, version)) return undefined;
    blocks.push(locked.text.replace(/^(\s*constraints\s*=\s*)"[^"]*"/m, (_all, lead: string) => `${lead}${JSON.stringify(version)}`));
  }
  // The engine writes the blocks in address order.
  return header + blocks.sort().join('\n');
}

/** A dotted version's numbers (`5.9.0` -> [5, 9, 0]); undefined for a pre-release or another form. */
function versionNumbers(v: string): number[] | undefined {
  return /^\d+(\.\d+){0,2}$/.test(v) ? v.split('.').map(Number) : undefined;
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Whether `version` satisfies a provider version constraint (`>= 5.6.0, < 6.0.0`, `~> 5.7`, `5.6.0`),
 * as the engines read one; false for a form this does not know (nothing is derived then).
 */
export function satisfiesConstraint(version: string, constraint: string): boolean {
  const v = versionNumbers(version);
  if (v === undefined) return false;
  return constraint.split(',').every((part) => {
    const m = /^\s*(>=|<=|!=|~>|>|<|=)?\s*(\S+)\s*$/.exec(part);
    const target = m ? versionNumbers(m[2]) : undefined;
    if (!m || target === undefined) return false;
    const c = compareVersions(v, target);
    switch (m[1] ?? '=') {
      case '>=': return c >= 0;
      case '<=': return c <= 0;
      case '>': return c > 0;
      case '<': return c < 0;
      case '!=': return c !== 0;
      case '=': return c === 0;
      default: {
        // ~> 5.7 allows 5.x from 5.7; ~> 5.7.1 allows 5.7.x from 5.7.1: the last given part may grow.
        const fixed = target.length - 1;
        return c >= 0 && v.slice(0, Math.max(fixed, 1)).every((n, i) => i >= fixed || n === target[i]);
      }
    }
  });
}

/**
 * Writes the committed lock file of every other stack synthesized beside `stackDir` that has none,
 * derived from `stackDir`'s committed lock ({@link derivedProviderLock}): a stack no one initialized
 * by hand (the people stack, a shard, a stack added later) gets its lock where it is committed, with
 * the provider builds this one was locked to. A stack whose providers the lock does not cover is left
 * to its own `init`.
 * @returns the lock files written
 */
export function deriveSiblingLockFiles(stackDir: string): string[] {
  const own = committedProviderLockFile(stackDir);
  const lock = own === undefined ? undefined : readIfFile(own)?.toString('utf8');
  if (lock === undefined) return [];
  const stacksDir = path.dirname(stackDir);
  const written: string[] = [];
  for (const sibling of fs.readdirSync(stacksDir).sort()) {
    const dir = path.join(stacksDir, sibling);
    if (dir === stackDir || !fs.statSync(dir).isDirectory()) continue;
    const committed = committedProviderLockFile(dir);
    if (committed === undefined || fs.existsSync(committed)) continue;
    const required = requiredProviders(dir);
    const derived = required === undefined ? undefined : derivedProviderLock(lock, required);
    if (derived === undefined) continue;
    writeWhole(committed, Buffer.from(derived, 'utf8'));
    written.push(committed);
  }
  return written;
}
