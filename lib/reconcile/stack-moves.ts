import { compareStrings } from '../private/compare-strings';
import { terraformString } from '../render/text-encoders';
import { DeclaredObject } from './declared-object';

/**
 * Name of the file `secretstore-iac moves` writes into a stack directory: the engine's `removed`
 * blocks of the objects that left the stack and `import` blocks of those that arrived. The synthesis
 * never writes it, so a re-synthesis carries it over (like `adopt-imports.tf.json`).
 */
export const MOVES_FILE = 'moves.tf.json';

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

/** What the engine must do in one stack for the moves: forget what left, import what arrived. */
export interface StackMoveBlocks {
  /** Addresses to forget (`removed` with `destroy = false`): the object stays on the store. */
  readonly forget: readonly string[];
  /** Objects to import: address and import id. */
  readonly imports: readonly { readonly to: string; readonly id: string }[];
}

/** The result of comparing two configurations' object homes. */
export interface StackMoves {
  /** Every object whose stack changed, sorted by store path. */
  readonly moves: readonly StackMove[];
  /** The blocks per stack, stacks sorted by name. */
  readonly byStack: ReadonlyMap<string, StackMoveBlocks>;
  /**
   * Objects declared by more than one stack on one side (the platform rules refuse it; a
   * hand-edited output may not): not moved, reported.
   */
  readonly ambiguous: readonly string[];
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
 * that `base` declares in one stack and `head` in another. An object only in one of them is a
 * create or a delete, not a move, and is left to the plans.
 */
export function stackMoves(base: readonly DeclaredObject[], head: readonly DeclaredObject[]): StackMoves {
  const twice = new Set<string>();
  const before = homes(base, twice);
  const after = homes(head, twice);
  const moves: StackMove[] = [];
  for (const [k, o] of after) {
    const was = before.get(k);
    if (!was || was.stack === o.stack || twice.has(k)) continue;
    moves.push({ kind: o.kind, storePath: o.storePath, importId: o.importId, from: { stack: was.stack, address: was.address }, to: { stack: o.stack, address: o.address } });
  }
  moves.sort((a, b) => compareStrings(a.storePath, b.storePath) || compareStrings(a.kind, b.kind));
  const blocks = new Map<string, { forget: string[]; imports: { to: string; id: string }[] }>();
  const of = (stack: string) => blocks.get(stack) ?? blocks.set(stack, { forget: [], imports: [] }).get(stack)!;
  for (const m of moves) {
    of(m.from.stack).forget.push(m.from.address);
    of(m.to.stack).imports.push({ to: m.to.address, id: m.importId });
  }
  const byStack = new Map(
    [...blocks.entries()]
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([stack, b]) => [stack, { forget: [...b.forget].sort(compareStrings), imports: [...b.imports].sort((x, y) => compareStrings(x.to, y.to)) }] as const),
  );
  return { moves, byStack, ambiguous: [...twice].sort(compareStrings) };
}

/**
 * The moves file of one stack (Terraform/OpenTofu JSON), byte-identical for the same blocks:
 * `removed { from, lifecycle { destroy = false } }` for what left (OpenTofu 1.7+ and Terraform 1.7+:
 * the engine forgets the object and leaves it on the store), `import { to, id }` for what arrived.
 * Both are no-ops once applied, so the file may stay; `moves` rewrites or removes it on every run.
 * @param engineSettings the `terraform` and `provider` blocks, for a stack directory the synthesis
 *   no longer writes (a retired shard): the engine then has a backend and a provider there
 */
export function renderMovesFile(blocks: StackMoveBlocks, engineSettings?: { readonly terraform: unknown; readonly provider: unknown }): string {
  return `${JSON.stringify(
    {
      '//': 'Written by `secretstore-iac moves BASE HEAD`: objects that moved between stacks are forgotten by the old stack (kept on the store) and imported by the new one, never destroyed and created again. See docs/sharding.md. Re-run moves to refresh; a no-op once applied.',
      ...(engineSettings ? { terraform: engineSettings.terraform, provider: engineSettings.provider } : {}),
      ...(blocks.forget.length > 0 ? { removed: blocks.forget.map((from) => ({ from, lifecycle: [{ destroy: false }] })) } : {}),
      // The id comes from the store's names: a literal, never a template (lib/render/text-encoders.ts).
      ...(blocks.imports.length > 0 ? { import: blocks.imports.map((b) => ({ to: b.to, id: terraformString(b.id) })) } : {}),
    },
    null,
    2,
  )}\n`;
}
