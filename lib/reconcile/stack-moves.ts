import * as fs from 'fs';
import * as path from 'path';
import { compareStrings } from '../private/compare-strings';
import { terraformString } from '../render/text-encoders';
import { DeclaredObject } from './declared-object';

/**
 * Name of the file `secretstore-iac moves` writes into a stack directory: the engine's `removed`
 * blocks of the objects that left the stack, `import` blocks of those that arrived and `moved`
 * blocks of those renamed within it. The synthesis
 * never writes it, so a re-synthesis carries it over (like `adopt-imports.tf.json`).
 */
export const MOVES_FILE = 'moves.tf.json';

/**
 * Whether `stackDir` is a retired stack's: a stack the configuration no longer has (fewer shards, a
 * removed section), whose directory holds no synthesized `cdk.tf.json`, only the {@link MOVES_FILE}
 * that `moves` wrote (its backend and provider, and the `removed` blocks that forget what moved out).
 */
export function isRetiredStackDirectory(stackDir: string): boolean {
  return !fs.existsSync(path.join(stackDir, 'cdk.tf.json')) && fs.existsSync(path.join(stackDir, MOVES_FILE));
}

/** One store object declared by one stack before and by another after (docs/sharding.md). */
export interface StackMove {
  /** What it is (`approle-role`, `policy`). */
  readonly kind: DeclaredObject['kind'];
  /** Where it lives on the store (`auth/approle/role/orchestrator-dev`). */
  readonly storePath: string;
  /** The provider's import id. */
  readonly importId: string;
  /** Stack and resource address before. */
  readonly from: { readonly stack: string; readonly address: string };
  /** Stack and resource address after. */
  readonly to: { readonly stack: string; readonly address: string };
}

/**
 * One store object a stack declares in BASE and HEAD under another resource address: its construct
 * id (or a parent's) was renamed. Planned as it is, the engine would create the new address and
 * destroy the old one: a new Role ID, every issued Secret ID refused.
 */
export interface StackRename {
  /** What it is (`approle-role`, `policy`). */
  readonly kind: DeclaredObject['kind'];
  /** Where it lives on the store (`auth/approle/role/billing-dev`). */
  readonly storePath: string;
  /** The stack declaring it on both sides. */
  readonly stack: string;
  /** Resource address in BASE. */
  readonly from: string;
  /** Resource address in HEAD. */
  readonly to: string;
}

/**
 * One store object BASE declares and HEAD declares nowhere: applying HEAD destroys it (a revocation).
 * Only the pipeline's approval job applies such a destroy (docs/pipelines.md §8).
 */
export interface StackRemoval {
  /** What it is (`approle-role`, `policy`, `jwt-auth-mount`). */
  readonly kind: DeclaredObject['kind'];
  /** Where it lives on the store (`auth/oidc/role/developers`). */
  readonly storePath: string;
  /** The stack of BASE that declared it. */
  readonly stack: string;
  /** Its resource address there. */
  readonly address: string;
  /** Whether HEAD still has that stack (else the whole stack is removed). */
  readonly stackRemains: boolean;
}

/**
 * One store object that BASE declares as a configuration pipeline role's grant and HEAD as something
 * else (an application's policy named like the grant of a stack the change retires), or the other way
 * round. Not a move: a retiring grant never becomes another object's policy (it would carry the
 * grant's place in the pipeline role's policies to the other object, or the other way round). BASE's
 * object is a removal (approved), HEAD's a creation, and the review shows both.
 */
export interface StackReassignment {
  /** What it is (`policy`). */
  readonly kind: DeclaredObject['kind'];
  /** Where it lives on the store (`sys/policies/acl/secretstore-iac-plan-app-roles-02`). */
  readonly storePath: string;
  /** Stack and resource address in BASE, and whether it is a pipeline grant there. */
  readonly from: { readonly stack: string; readonly address: string; readonly grant: boolean };
  /** Stack and resource address in HEAD, and whether it is a pipeline grant there. */
  readonly to: { readonly stack: string; readonly address: string; readonly grant: boolean };
}

/** Which objects of each side are the configuration pipeline roles' grants, as `<stack> <address>` (`declaredPipelineGrants`). */
export interface PipelineGrantAddresses {
  /** BASE's grants. */
  readonly base: ReadonlySet<string>;
  /** HEAD's grants. */
  readonly head: ReadonlySet<string>;
}

/** What the engine must do in one stack for the moves: forget what left, import what arrived, follow renames. */
export interface StackMoveBlocks {
  /** Addresses to forget (`removed` with `destroy = false`): the object stays on the store. */
  readonly forget: readonly string[];
  /** Objects to import: address and import id. */
  readonly imports: readonly { readonly to: string; readonly id: string }[];
  /**
   * Renamed addresses within the stack (`moved { from, to }`): the engine moves the object in its
   * state, nothing on the store changes.
   * @default none
   */
  readonly renames?: readonly { readonly from: string; readonly to: string }[];
}

/** The result of comparing two configurations' object homes. */
export interface StackMoves {
  /** Every object whose stack changed, sorted by store path. */
  readonly moves: readonly StackMove[];
  /** Every object whose address changed within its stack, sorted by store path. */
  readonly renames: readonly StackRename[];
  /**
   * Every object of BASE that HEAD declares nowhere, sorted by stack, then store path: revocations,
   * destroyed only after approval. Without the grants of {@link StackMoves.retiredGrants}.
   */
  readonly removals: readonly StackRemoval[];
  /**
   * The configuration pipeline roles' own grants in retired stacks whose every other object moved
   * ({@link separateRetiredOwnGrants}): pipeline-internal, they grant no identity access to a secret,
   * and the objects they covered are covered by the grants of the stacks they moved to, so the
   * retired stack's apply destroys them without approval. Sorted like `removals`.
   * @default none
   */
  readonly retiredGrants?: readonly StackRemoval[];
  /** The blocks per stack, stacks sorted by name. */
  readonly byStack: ReadonlyMap<string, StackMoveBlocks>;
  /**
   * Objects declared by more than one stack on one side (the platform rules refuse it; a
   * hand-edited output may not): not moved, reported.
   */
  readonly ambiguous: readonly string[];
  /**
   * Objects that are a pipeline grant on one side and something else on the other
   * ({@link StackReassignment}): listed among the removals (BASE's) and here, never moved.
   * @default none
   */
  readonly reassigned?: readonly StackReassignment[];
  /**
   * Renames the engine cannot follow: the old address is declared again in HEAD by another object
   * (a `moved` block from a declared address is refused by the engine), as text.
   */
  readonly conflicts: readonly string[];
}

const key = (o: DeclaredObject): string => `${o.kind} ${o.storePath}`;

/** Objects by store identity; identities declared twice are listed in `twice`. */
function homes(objects: readonly DeclaredObject[], twice: Set<string>): Map<string, DeclaredObject> {
  const map = new Map<string, DeclaredObject>();
  for (const o of objects) {
    if (map.has(key(o))) twice.add(key(o));
    else map.set(key(o), o);
  }
  return map;
}

/**
 * The moves between two synthesized configurations: every store object (auth mount, role, policy)
 * that `base` declares in one stack and `head` in another (a move), or in the same stack under
 * another resource address (a rename: a construct id changed), compared by the object's store
 * identity (kind and store path: mount and role name, policy name). An object only in `base` is a
 * removal (listed, left to the plans and their approval); one only in `head` is a create. An object
 * that is a configuration pipeline role's grant on one side and not on the other is neither moved
 * nor renamed: a removal plus a creation ({@link StackReassignment}).
 * @param grants the pipeline grants of each side; without them, none is told apart
 */
export function stackMoves(base: readonly DeclaredObject[], head: readonly DeclaredObject[], grants?: PipelineGrantAddresses): StackMoves {
  const twice = new Set<string>();
  const before = homes(base, twice);
  const after = homes(head, twice);
  const moves: StackMove[] = [];
  const renames: StackRename[] = [];
  const conflicts: string[] = [];
  const reassigned: StackReassignment[] = [];
  const isGrant = (side: ReadonlySet<string> | undefined, o: DeclaredObject) => side?.has(`${o.stack} ${o.address}`) ?? false;
  const headAddresses = new Set(head.map((o) => `${o.stack} ${o.address}`));
  for (const [k, o] of after) {
    const was = before.get(k);
    if (!was || twice.has(k)) continue;
    const wasGrant = isGrant(grants?.base, was);
    const isGrantNow = isGrant(grants?.head, o);
    if (wasGrant !== isGrantNow) {
      reassigned.push({ kind: o.kind, storePath: o.storePath, from: { stack: was.stack, address: was.address, grant: wasGrant }, to: { stack: o.stack, address: o.address, grant: isGrantNow } });
    } else if (was.stack !== o.stack) {
      moves.push({ kind: o.kind, storePath: o.storePath, importId: o.importId, from: { stack: was.stack, address: was.address }, to: { stack: o.stack, address: o.address } });
    } else if (was.address !== o.address) {
      if (headAddresses.has(`${o.stack} ${was.address}`)) {
        conflicts.push(`${o.kind} ${o.storePath} in stack ${o.stack}: renamed from ${was.address} to ${o.address}, but ${was.address} now declares another object`);
      } else {
        renames.push({ kind: o.kind, storePath: o.storePath, stack: o.stack, from: was.address, to: o.address });
      }
    }
  }
  moves.sort((a, b) => compareStrings(a.storePath, b.storePath) || compareStrings(a.kind, b.kind));
  renames.sort((a, b) => compareStrings(a.storePath, b.storePath) || compareStrings(a.kind, b.kind));
  const headStacks = new Set(head.map((o) => o.stack));
  reassigned.sort((a, b) => compareStrings(a.storePath, b.storePath) || compareStrings(a.kind, b.kind));
  const notMoved = new Set(reassigned.map((r) => `${r.kind} ${r.storePath}`));
  const removals: StackRemoval[] = [...before.entries()]
    .filter(([k]) => (!after.has(k) || notMoved.has(k)) && !twice.has(k))
    .map(([, o]) => ({ kind: o.kind, storePath: o.storePath, stack: o.stack, address: o.address, stackRemains: headStacks.has(o.stack) }))
    .sort((a, b) => compareStrings(a.stack, b.stack) || compareStrings(a.storePath, b.storePath) || compareStrings(a.kind, b.kind));
  const blocks = new Map<string, { forget: string[]; imports: { to: string; id: string }[]; renames: { from: string; to: string }[] }>();
  const of = (stack: string) => blocks.get(stack) ?? blocks.set(stack, { forget: [], imports: [], renames: [] }).get(stack)!;
  for (const m of moves) {
    of(m.from.stack).forget.push(m.from.address);
    of(m.to.stack).imports.push({ to: m.to.address, id: m.importId });
  }
  for (const r of renames) of(r.stack).renames.push({ from: r.from, to: r.to });
  const byStack = new Map(
    [...blocks.entries()]
      .sort(([a], [b]) => compareStrings(a, b))
      .map(
        ([stack, b]) =>
          [
            stack,
            {
              forget: [...b.forget].sort(compareStrings),
              imports: [...b.imports].sort((x, y) => compareStrings(x.to, y.to)),
              ...(b.renames.length > 0 ? { renames: [...b.renames].sort((x, y) => compareStrings(x.from, y.from)) } : {}),
            },
          ] as const,
      ),
  );
  return {
    moves,
    renames,
    removals,
    byStack,
    ...(reassigned.length > 0 ? { reassigned } : {}),
    ambiguous: [...twice].sort(compareStrings),
    conflicts: conflicts.sort(compareStrings),
  };
}

/**
 * The moves file of one stack (Terraform/OpenTofu JSON), byte-identical for the same blocks:
 * `removed { from, lifecycle { destroy = false } }` for what left (OpenTofu 1.7+ and Terraform 1.7+:
 * the engine forgets the object and leaves it on the store), `import { to, id }` for what arrived.
 * `moved { from, to }` for an address renamed within the stack. All are no-ops once applied, so the
 * file may stay; `moves` rewrites or removes it on every run.
 * @param engineSettings the `terraform` and `provider` blocks, for a stack directory the synthesis
 *   no longer writes (a retired shard): the engine then has a backend and a provider there
 */
export function renderMovesFile(blocks: StackMoveBlocks, engineSettings?: { readonly terraform: unknown; readonly provider: unknown }): string {
  return `${JSON.stringify(
    {
      '//': 'Written by `secretstore-iac moves BASE HEAD`: objects that moved between stacks are forgotten by the old stack (kept on the store) and imported by the new one, objects renamed within a stack are moved in its state, never destroyed and created again. See docs/sharding.md. Re-run moves to refresh; a no-op once applied.',
      ...(engineSettings ? { terraform: engineSettings.terraform, provider: engineSettings.provider } : {}),
      ...(blocks.forget.length > 0 ? { removed: blocks.forget.map((from) => ({ from, lifecycle: [{ destroy: false }] })) } : {}),
      // The id comes from the store's names: a literal, never a template (lib/render/text-encoders.ts).
      ...(blocks.imports.length > 0 ? { import: blocks.imports.map((b) => ({ to: b.to, id: terraformString(b.id) })) } : {}),
      // `moved` (Terraform 1.1+, OpenTofu): the state follows a renamed address; no create, no destroy.
      ...((blocks.renames ?? []).length > 0 ? { moved: blocks.renames!.map((r) => ({ from: r.from, to: r.to })) } : {}),
    },
    null,
    2,
  )}\n`;
}

/**
 * Moves a retired stack's own pipeline grants from the removals to `retiredGrants` when they are
 * all the stack removes (every other object of it moved), but a grant HEAD declares as another
 * object ({@link StackReassignment}), which waits for approval: its plan then only forgets and destroys
 * those grants, which needs no person (docs/pipelines.md §8). A retired stack that also removes
 * anything else (an application, a people role) keeps its grants among its removals: its one plan
 * waits for approval, grants included.
 * @param grants the retired stacks' own grants as BASE's synthesis declared them (`retiredOwnGrants`)
 */
export function separateRetiredOwnGrants(result: StackMoves, grants: readonly { readonly stack: string; readonly address: string; readonly storePath: string }[]): StackMoves {
  // A grant whose store object HEAD declares as something else is a revocation like any other: approved.
  const reassigned = new Set((result.reassigned ?? []).map((r) => r.storePath));
  const isGrant = (r: StackRemoval) => !r.stackRemains && !reassigned.has(r.storePath) && grants.some((g) => g.stack === r.stack && g.address === r.address && g.storePath === r.storePath);
  const onlyGrants = new Set(
    [...new Set(result.removals.map((r) => r.stack))].filter((stack) => result.removals.filter((r) => r.stack === stack).every(isGrant)),
  );
  const automatic = result.removals.filter((r) => onlyGrants.has(r.stack));
  if (automatic.length === 0) return result;
  return { ...result, removals: result.removals.filter((r) => !onlyGrants.has(r.stack)), retiredGrants: [...(result.retiredGrants ?? []), ...automatic] };
}
