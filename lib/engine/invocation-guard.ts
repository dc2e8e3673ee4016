import * as fs from 'fs';
import * as path from 'path';
import { commandWords, EngineInvocation, EngineOption, flagSet, flagValue, optionValue } from './engine-invocation';
import { AcceptedOption, acceptedOption, declaredOptions, guardAccepts, optionKind, STATE_WRITING_COMMANDS } from './engine-options';
import { GuardRefusal } from './guard-refusal';

/**
 * What `tf --refuse-replace` does with an engine command line before (and after) the engine runs.
 * - `unchecked`: it changes nothing on the store and takes nothing out of state: runs as given.
 * - `saved-plan`: `apply PLANFILE`: the saved plan is reviewed, then applied as given.
 * - `planned`: `plan -out=FILE`: runs, then the plan it saved is reviewed.
 * - `plan-then-apply`: `apply` without a plan file, `destroy`: a plan made with the operator's own
 *   arguments (`planArgs`, the plan file added) is reviewed; then that very plan is applied
 *   (`applyArgs`, the plan file added), or, without `-auto-approve`, the command runs as given and
 *   the engine shows its plan and asks.
 */
export type GuardedInvocation =
  | { readonly kind: 'unchecked' }
  | { readonly kind: 'saved-plan'; readonly planFile: string }
  | { readonly kind: 'planned'; readonly planFile: string }
  | { readonly kind: 'plan-then-apply'; readonly planArgs: readonly string[]; readonly applyArgs?: readonly string[] };

/**
 * Thrown when `tf` refuses an engine command line before the engine runs; the CLI exits with
 * `ExitCode.destructionRefused` (4).
 */
export class InvocationRefused extends GuardRefusal {
  constructor(
    /** The stack. */
    readonly stack: string,
    /** The engine's words (`state rm`). */
    readonly command: string,
    reason: string,
    fix: string,
  ) {
    super(`${stack}: nothing run: \`${command}\` ${reason}. Fix: ${fix}`);
    this.name = 'InvocationRefused';
  }
}

/** Options that decide what a plan holds: given to the guard's plan, never to the apply of a saved plan (the engine refuses them there). */
const PLAN_SHAPING = new Set(['destroy', 'exclude', 'exclude-file', 'refresh', 'refresh-only', 'replace', 'target', 'target-file', 'var', 'var-file']);

/** Options of `apply` the guard's `plan` does not take, or sets itself. */
const NOT_FOR_THE_GUARD_PLAN = new Set(['auto-approve', 'backup', 'input', 'out', 'detailed-exitcode']);

const tokens = (options: readonly EngineOption[]): string[] => options.flatMap((o) => [...o.tokens]);

/** Why a command is refused under --refuse-replace as a whole, and the fix (for the stack). */
interface CommandRefusal {
  readonly reason: string;
  readonly fix: (stack: string) => string;
}

/** The commands about providers and locks that --refuse-replace refuses whatever their options. */
const REFUSED_COMMANDS: Readonly<Record<string, CommandRefusal>> = {
  'providers lock': {
    reason:
      'rewrites the stack\'s provider lock file (from -fs-mirror, -net-mirror or the registry): every later init installs, and every plan and apply runs, the provider build the new lock names, not the one the tool installed',
    fix: (stack) =>
      `the lock comes from \`secretstore-iac tf ${stack} -- init\`, from the tool's provider mirror (docs/toolchain.md); to add checksums, a person runs \`providers lock\` without --refuse-replace and commits locks/${stack}/.terraform.lock.hcl`,
  },
  'providers mirror': {
    reason: 'writes provider packages into a directory of its own: the tool installs providers only from its own mirror',
    fix: () => 'run `tofu providers mirror DIR` outside secretstore-iac, away from the stack directory',
  },
  'force-unlock': {
    reason: 'removes another run\'s state lock: that run (a pipeline job, a person\'s apply) may still be writing the state, and both then write it',
    fix: (stack) =>
      `wait for the other run (\`-lock-timeout=10m\`, as the pipeline's jobs do); if a person checked that no run holds the lock, \`secretstore-iac tf ${stack} -- force-unlock LOCK_ID\` without --refuse-replace`,
  },
};

/** Why an option (or its value) is refused, and the fix; for the options whose effect is known. */
const OPTION_REFUSALS: Readonly<Record<string, { readonly reason: string; readonly fix: string }>> = {
  lock: {
    reason:
      'no state lock held: another run (a pipeline job, a person) may write the same state at the same time, and what one of them creates ends up in neither state',
    fix: 'leave -lock=false out; to wait for another run, give -lock-timeout=10m (as the pipeline\'s jobs do)',
  },
  state: { reason: 'another state file than the stack\'s own, which the guards review (objects written there leave the stack\'s state)', fix: 'leave it out' },
  'state-out': { reason: 'another state file than the stack\'s own, which the guards review (objects written there leave the stack\'s state)', fix: 'leave it out' },
  backup: { reason: 'the state\'s backup written elsewhere, or with `-backup=-` not at all', fix: 'leave it out' },
  'backup-out': { reason: 'the state\'s backup written elsewhere', fix: 'leave it out' },
  'ignore-remote-version': { reason: 'lets this engine write a remote state whose workspace asks for another engine version', fix: 'leave it out; run the engine version the backend asks for' },
  'plugin-dir': {
    reason: 'installs providers from that directory instead of the tool\'s provider mirror, and keeps it for every later init: the next plan and apply would run whatever it holds',
    fix: 'leave it out: init installs from the tool\'s provider mirror (docs/toolchain.md)',
  },
  upgrade: {
    reason: 'selects newer provider versions and rewrites the stack\'s lock file',
    fix: 'a person upgrades: `secretstore-iac tf STACK -- init -upgrade` without --refuse-replace, then commits locks/STACK/.terraform.lock.hcl',
  },
  lockfile: { reason: 'a lock file mode other than `readonly` (the only mode that keeps the lock as it is)', fix: 'give -lockfile=readonly or leave it out' },
  'from-module': { reason: 'copies another module into the stack directory before init', fix: 'leave it out: the stack directory holds what synthesis wrote' },
  'backend-config': {
    reason: 'merges settings into the synthesized backend block: the state may live elsewhere than the configuration says',
    fix: 'declare the backend in the configuration (docs/configuration-repository.md); leave it out',
  },
  backend: { reason: 'keeps the backend of an earlier init instead of the synthesized one', fix: 'leave it out' },
  cloud: { reason: 'keeps the backend of an earlier init instead of the synthesized one', fix: 'leave it out' },
  reconfigure: { reason: 're-initializes the backend, ignoring the one the state was in', fix: 'a person changes a backend: run it without --refuse-replace' },
  'migrate-state': { reason: 'copies the state to another backend', fix: 'a person migrates state: run it without --refuse-replace' },
  'force-copy': { reason: 'copies the state to another backend without asking', fix: 'a person migrates state: run it without --refuse-replace' },
  'generate-config-out': { reason: 'writes configuration into the stack directory, which holds only what synthesis wrote', fix: 'leave it out' },
  'test-directory': { reason: 'reads test files from another directory', fix: 'leave it out' },
  update: { reason: 'fetches newer module sources than the ones init installed', fix: 'leave it out; a person runs it without --refuse-replace' },
};

/** An option --refuse-replace does not pass, with why and the fix. */
interface RefusedOption {
  readonly option: EngineOption;
  readonly reason: string;
  readonly fix: string;
}

/**
 * The options of `invocation` that `accepted` (what the guard accepts for its command) does not hold,
 * or holds with other values; each with the reason and the fix.
 */
function refusedOptions(invocation: EngineInvocation, accepted: Readonly<Record<string, AcceptedOption>>, stack: string): RefusedOption[] {
  const command = commandWords(invocation);
  const declared = declaredOptions(command) ?? {};
  const refused: RefusedOption[] = [];
  for (const option of invocation.options) {
    const rule = acceptedOption(accepted, option.name);
    const kind = optionKind(declared, option.name);
    const value = kind === 'flag' ? flagValue(option) : option.value ?? '';
    if (rule === true || (rule !== undefined && rule.includes(value))) continue;
    const known = Object.prototype.hasOwnProperty.call(OPTION_REFUSALS, option.name) ? OPTION_REFUSALS[option.name] : undefined;
    if (known !== undefined && kind !== undefined) {
      refused.push({ option, reason: known.reason, fix: known.fix.replace(/STACK/g, stack) });
    } else if (kind !== undefined) {
      refused.push({
        option,
        reason: `an option of \`${command}\` that --refuse-replace does not pass: it passes only the options it can review (docs/operators.md)`,
        fix: 'leave it out; if a person decided to run it, run it without --refuse-replace',
      });
    } else {
      refused.push({
        option,
        reason: 'an option --refuse-replace does not know: it cannot tell what the engine would plan or apply with it',
        fix: 'leave it out; if a person decided to run it, run it without --refuse-replace',
      });
    }
  }
  return refused;
}

/**
 * Refuses `-lock=false` on a command that writes the stack's state (apply, destroy, refresh, import,
 * init, taint, untaint, state rm/mv/push/replace-provider, workspace new/delete), with or without
 * --refuse-replace: two runs at once on one state each write what they created, and the objects of
 * the run whose state was overwritten end up in no state (seen on PostgreSQL state: 4 store objects).
 * A plan writes no state: `plan -lock=false` passes.
 * @throws InvocationRefused naming the option, why and the fix
 */
export function refuseUnlockedStateWrite(invocation: EngineInvocation, stack: string): void {
  const command = commandWords(invocation);
  if (!STATE_WRITING_COMMANDS.has(command)) return;
  const unlocked = invocation.options.filter((o) => o.name === 'lock' && flagValue(o) !== 'true');
  if (unlocked.length === 0) return;
  throw new InvocationRefused(stack, command, `has ${unlocked.map((o) => `\`${o.tokens.join(' ')}\``).join(', ')} (${OPTION_REFUSALS.lock.reason})`, OPTION_REFUSALS.lock.fix);
}

/**
 * The resource addresses a synthesized stack declares (`type.id` of its `cdk.tf.json`); none for a
 * retired stack (only its moves file).
 */
export function declaredAddresses(stackDir: string): Set<string> {
  try {
    const stack = JSON.parse(fs.readFileSync(path.join(stackDir, 'cdk.tf.json'), 'utf8'));
    return new Set(Object.entries(stack.resource ?? {}).flatMap(([type, blocks]) => Object.keys(blocks as object).map((id) => `${type}.${id}`)));
  } catch {
    return new Set();
  }
}

/**
 * What `--refuse-replace` does with an engine command line: every form that can change the store or
 * take an object out of the stack's state is reviewed (a plan made with the operator's own arguments)
 * or refused; forms that change neither run as given.
 * @param declared the stack's resource addresses ({@link declaredAddresses}), for `state mv`
 * @throws InvocationRefused naming the reason and the fix, for what it cannot check or what drops an object
 */
export function guardInvocation(invocation: EngineInvocation, stack: string, declared: ReadonlySet<string>): GuardedInvocation {
  const command = commandWords(invocation);
  const refuse = (reason: string, fix: string): never => {
    throw new InvocationRefused(stack, command || invocation.globals.map((g) => g.tokens.join(' ')).join(' '), reason, fix);
  };
  const sub = invocation.subcommand;
  if (invocation.globals.length > 0) {
    refuse(
      `runs with ${invocation.globals.map((g) => g.tokens.join(' ')).join(' ')}: --refuse-replace reviews the stack's own directory and state`,
      'leave it out (`secretstore-iac tf` runs the engine in the directory of STACK under --outdir)',
    );
  }
  if (sub === undefined) return { kind: 'unchecked' };
  const accepted = guardAccepts(command);
  const whole = Object.prototype.hasOwnProperty.call(REFUSED_COMMANDS, command) ? REFUSED_COMMANDS[command] : undefined;
  if (whole !== undefined) refuse(whole.reason, whole.fix(stack));
  if (accepted !== undefined) {
    const refused = refusedOptions(invocation, accepted, stack);
    if (refused.length > 0) {
      refuse(
        `has ${refused.map((r) => `\`${r.option.tokens.join(' ')}\` (${r.reason})`).join(', ')}`,
        [...new Set(refused.map((r) => r.fix))].join('; '),
      );
    }
  }
  switch (sub) {
    case 'plan': {
      const out = optionValue(invocation, 'out');
      return out === undefined ? { kind: 'unchecked' } : { kind: 'planned', planFile: out };
    }
    case 'apply':
    case 'destroy': {
      if (sub === 'apply' && invocation.positionals.length > 0) return { kind: 'saved-plan', planFile: invocation.positionals[0] };
      const planArgs = [
        'plan',
        ...(sub === 'destroy' ? ['-destroy'] : []),
        ...tokens(invocation.options.filter((o) => !NOT_FOR_THE_GUARD_PLAN.has(o.name))),
        '-input=false',
        // As the guard always planned: no lock held between its plan and the apply (a saved plan
        // whose state changed in between is refused by the engine as stale).
        ...(invocation.options.some((o) => o.name === 'lock') ? [] : ['-lock=false']),
      ];
      // With -auto-approve nobody reads a plan: the reviewed plan itself is applied.
      if (!flagSet(invocation, 'auto-approve')) return { kind: 'plan-then-apply', planArgs };
      return { kind: 'plan-then-apply', planArgs, applyArgs: ['apply', ...tokens(invocation.options.filter((o) => !PLAN_SHAPING.has(o.name)))] };
    }
    case 'import':
      return refuse(
        'writes a store object into this stack\'s state without a plan the guards can review: the next apply changes the object to the declaration, whatever it held, and an object another stack manages would be held by two states',
        `run \`secretstore-iac adopt ${stack}\`: it imports every object the stack declares that the store has, after a plan check that refuses what would be destroyed or replaced; then \`secretstore-iac tf ${stack} --refuse-replace -- apply\` (docs/adoption.md)`,
      );
    case 'taint':
      return refuse(
        `makes the next apply replace ${invocation.positionals.join(' ') || 'the object'} (destroyed, then created again: an AppRole role gets a new Role ID and every Secret ID issued for it is refused; a mount loses every role under it)`,
        `to recover an object an interrupted apply left tainted, \`untaint\` it; a replacement needs a person: \`secretstore-iac tf ${stack} -- apply -replace=ADDRESS\` without --refuse-replace shows the plan and asks`,
      );
    case 'state':
      if (accepted !== undefined && !['rm', 'mv'].includes(invocation.action ?? '')) return { kind: 'unchecked' };
      if (flagSet(invocation, 'dry-run') && (invocation.action === 'rm' || invocation.action === 'mv')) return { kind: 'unchecked' };
      if (invocation.action === 'rm') {
        return refuse(
          `takes ${invocation.positionals.join(' ') || 'objects'} out of this stack's state: the store keeps the object, managed by no stack, and the next apply creates it again over the store's (a takeover --refuse-replace refuses)`,
          `to move an object to another stack, run \`secretstore-iac moves BASE HEAD\` (docs/sharding.md); if a person decided to stop managing it, run it without --refuse-replace`,
        );
      }
      if (invocation.action === 'mv') return checkStateMove(invocation, declared, refuse);
      return refuse(
        `changes the state in a way --refuse-replace cannot check`,
        'if a person decided to run it, run it without --refuse-replace',
      );
    default:
      if (accepted !== undefined) return { kind: 'unchecked' };
      return refuse(
        sub === 'workspace' ? 'deletes a workspace\'s state: its objects stay on the store, managed by no stack' : `is a command --refuse-replace cannot check (it may change the store or the state)`,
        'if a person decided to run it, run it without --refuse-replace',
      );
  }
}

/**
 * `state mv FROM TO` keeps the object managed only when it follows a rename of this stack's
 * declaration: FROM no longer declared, TO declared, the same resource type.
 */
function checkStateMove(invocation: EngineInvocation, declared: ReadonlySet<string>, refuse: (reason: string, fix: string) => never): GuardedInvocation {
  const fix = 'move an object only to the address this stack declares for it now (its cdk.tf.json), from an address it no longer declares; to move objects between stacks, run `secretstore-iac moves BASE HEAD` (docs/sharding.md)';
  if (invocation.positionals.length !== 2) return refuse('needs exactly a FROM and a TO address', fix);
  const [from, to] = invocation.positionals;
  if (declared.has(from)) return refuse(`would leave ${from}, which this stack still declares: the next apply creates it again over the store's object`, fix);
  if (!declared.has(to)) return refuse(`would move the object to ${to}, which this stack does not declare: the next apply destroys it`, fix);
  if (from.split('.')[0] !== to.split('.')[0]) return refuse(`would move a ${from.split('.')[0]} to a ${to.split('.')[0]}`, fix);
  return { kind: 'unchecked' };
}

/**
 * Whether a command line asks for the engine's destroy planning mode: `destroy`, `apply -destroy`,
 * or `plan -destroy -out=FILE` (a plan file that destroys, for a later apply). Without
 * `--refuse-replace` these need `--allow-destroy`; `plan -destroy` alone only shows what would go.
 */
export function asksToDestroy(invocation: EngineInvocation): boolean {
  if (invocation.subcommand === 'destroy') return true;
  if (invocation.subcommand === 'apply') return flagSet(invocation, 'destroy');
  return invocation.subcommand === 'plan' && flagSet(invocation, 'destroy') && optionValue(invocation, 'out') !== undefined;
}

/**
 * Thrown when `tf` is asked to destroy without `--allow-destroy`; the CLI exits with
 * `ExitCode.destructionRefused` (4), nothing destroyed.
 */
export class DestroyNotAllowed extends GuardRefusal {
  constructor(
    readonly stack: string,
    command: string,
    /** The addresses in the stack's state (what `destroy` would take), or undefined when the state could not be read. */
    readonly inState: readonly string[] | undefined,
  ) {
    const what =
      inState === undefined
        ? 'every object in the stack\'s state'
        : inState.length === 0
          ? 'every object in the stack\'s state (none now)'
          : `every object in the stack's state (${inState.length}: ${inState.join(', ')})`;
    super(
      `${stack}: nothing destroyed: \`${command}\` destroys ${what}; for an auth mount that is every role under it, with its Role ID and every Secret ID issued. ` +
        `Fix: to see what would go, run \`secretstore-iac tf ${stack} -- plan -destroy\`; if a person decided it, run again with --allow-destroy (the engine shows the plan and asks, unless -auto-approve)`,
    );
    this.name = 'DestroyNotAllowed';
  }
}
