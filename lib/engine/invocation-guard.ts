import * as fs from 'fs';
import * as path from 'path';
import { commandWords, EngineInvocation, EngineOption, FLAG_OPTIONS, flagSet, optionValue, VALUE_OPTIONS } from './engine-invocation';
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

/** Subcommands that change neither the store nor what the state holds (or only read the store into state). */
const UNCHECKED = new Set([
  'console', 'fmt', 'force-unlock', 'get', 'graph', 'help', 'init', 'login', 'logout', 'metadata', 'modules', 'output',
  'providers', 'refresh', 'show', 'untaint', 'validate', 'version',
]);

const tokens = (options: readonly EngineOption[]): string[] => options.flatMap((o) => [...o.tokens]);

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
  if (UNCHECKED.has(sub) || (sub === 'workspace' && invocation.action !== 'delete') || (sub === 'state' && ['list', 'show', 'pull'].includes(invocation.action ?? ''))) {
    return { kind: 'unchecked' };
  }
  const unknown = invocation.options.filter((o) => !VALUE_OPTIONS.has(o.name) && !FLAG_OPTIONS.has(o.name));
  if (unknown.length > 0) {
    refuse(
      `has ${unknown.map((o) => `\`${o.tokens.join(' ')}\``).join(', ')}, an option --refuse-replace does not know: it cannot tell what the engine would plan or apply with it`,
      'leave it out; if a person decided to run it, run it without --refuse-replace',
    );
  }
  const otherState = invocation.options.filter((o) => o.name === 'state' || o.name === 'state-out');
  if (otherState.length > 0) {
    refuse(
      `has ${otherState.map((o) => `\`${o.tokens.join(' ')}\``).join(', ')}: another state file than the stack's own, which the guards review (objects written there leave the stack's state)`,
      'leave it out',
    );
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
