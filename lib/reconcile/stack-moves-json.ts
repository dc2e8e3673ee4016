import { compareStrings } from '../private/compare-strings';
import { DeclaredObjectKind } from './declared-object';
import { StackMoves } from './stack-moves';

/** What `moves` does with one stack's moves file: writes it, or removes a stale one. */
export type MovesFileAction = 'write' | 'remove';

/** One stack as `moves --format json` reports it. */
export interface StackMovesJsonStack {
  /** The stack (`app-roles-a3`). */
  readonly stack: string;
  /** True for a stack of BASE that HEAD no longer has (its directory holds only the moves file). */
  readonly retired: boolean;
  /** The stack's moves file (relative to the working directory) and what happens to it; absent when nothing is done. */
  readonly movesFile?: { readonly path: string; readonly action: MovesFileAction };
  /** Objects renamed within the stack (`moved` blocks): the state follows, the store keeps them. */
  readonly moved: readonly { readonly kind: DeclaredObjectKind; readonly storePath: string; readonly from: string; readonly to: string }[];
  /** Objects that left the stack (`removed` blocks, destroy = false): forgotten, kept on the store. */
  readonly forgotten: readonly { readonly kind: DeclaredObjectKind; readonly storePath: string; readonly address: string; readonly toStack: string }[];
  /** Objects that joined the stack (`import` blocks). */
  readonly imported: readonly { readonly kind: DeclaredObjectKind; readonly storePath: string; readonly address: string; readonly id: string; readonly fromStack: string }[];
  /** Objects BASE declared in the stack and HEAD declares nowhere: its plan destroys them (after approval). */
  readonly removed: readonly { readonly kind: DeclaredObjectKind; readonly storePath: string; readonly address: string }[];
  /**
   * The configuration pipeline roles' own grants in this retired stack, when every other object of it
   * moved: its plan destroys them without approval (pipeline-internal, they give no identity access
   * to a secret). Not in `removed`.
   */
  readonly grantsDestroyedAutomatically: readonly { readonly kind: DeclaredObjectKind; readonly storePath: string; readonly address: string }[];
}

/** The one JSON object `secretstore-iac moves --format json` prints. */
export interface StackMovesJson {
  readonly command: 'moves';
  /** BASE as named in reports (a ref or a directory). */
  readonly base: string;
  /** HEAD as given. */
  readonly head: string;
  /** False with `--dry-run`: nothing was written. */
  readonly written: boolean;
  /** Per stack, sorted by name: every stack with a moves file action or an object moved, renamed or removed. */
  readonly stacks: readonly StackMovesJsonStack[];
}

/**
 * The moves as the JSON `moves --format json` prints: per stack, the objects renamed (`moved`),
 * forgotten, imported and removed, the retired stack's own pipeline grants destroyed without
 * approval, and what happens to its moves file. Only store paths, resource
 * addresses and import ids: `moves` reads no secret.
 * @param files the moves file of each stack `moves` handles, with its action
 */
export function stackMovesJson(
  result: StackMoves,
  sides: { readonly base: string; readonly head: string },
  files: ReadonlyMap<string, { readonly path: string; readonly action: MovesFileAction; readonly retired: boolean }>,
  written: boolean,
): StackMovesJson {
  const stacks = new Map<string, { moved: any[]; forgotten: any[]; imported: any[]; removed: any[]; grantsDestroyedAutomatically: any[] }>();
  const of = (stack: string) => {
    let entry = stacks.get(stack);
    if (!entry) stacks.set(stack, (entry = { moved: [], forgotten: [], imported: [], removed: [], grantsDestroyedAutomatically: [] }));
    return entry;
  };
  for (const m of result.moves) {
    of(m.from.stack).forgotten.push({ kind: m.kind, storePath: m.storePath, address: m.from.address, toStack: m.to.stack });
    of(m.to.stack).imported.push({ kind: m.kind, storePath: m.storePath, address: m.to.address, id: m.importId, fromStack: m.from.stack });
  }
  for (const r of result.renames) of(r.stack).moved.push({ kind: r.kind, storePath: r.storePath, from: r.from, to: r.to });
  for (const r of result.removals) of(r.stack).removed.push({ kind: r.kind, storePath: r.storePath, address: r.address });
  for (const r of result.retiredGrants ?? []) of(r.stack).grantsDestroyedAutomatically.push({ kind: r.kind, storePath: r.storePath, address: r.address });
  for (const stack of files.keys()) of(stack);
  return {
    command: 'moves',
    base: sides.base,
    head: sides.head,
    written,
    stacks: [...stacks.entries()]
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([stack, objects]) => {
        const file = files.get(stack);
        return {
          stack,
          retired: file?.retired ?? false,
          ...(file ? { movesFile: { path: file.path, action: file.action } } : {}),
          ...objects,
        };
      }),
  };
}
