import { AccessDiff } from '../access/access-diff';
import { describeDestruction, PlannedDestruction } from '../engine/replacement-guard';
import { AdoptionPlan } from '../reconcile/adoption-plan';

/** An object adopt will not adopt, with why and the fix. */
export interface AdoptionRefusal {
  /** Resource address in the stack. */
  readonly address: string;
  /**
   * `conflict`: the store holds something an import cannot adopt (resolve by hand); `plan-check`: the
   * plan of the imports would destroy or replace it (nothing written).
   */
  readonly why: 'conflict' | 'plan-check';
  /** What is wrong and the fix, as the text report says it. */
  readonly message: string;
}

/** A file adopt wrote or removed in a stack directory. */
export interface AdoptionFileChange {
  /** Path relative to the working directory. */
  readonly path: string;
  /** `written`, or `removed` (nothing left to import, a damaged file, or imports the plan check refused). */
  readonly action: 'written' | 'removed';
}

/** One stack as `adopt --format json` reports it. */
export interface AdoptionJsonStack {
  readonly stack: string;
  /** Resource addresses in the stack's state. */
  readonly inState: number;
  /** Import blocks: declared objects on the store, not in state. */
  readonly imports: readonly { readonly address: string; readonly id: string }[];
  /** Declared objects on neither: the apply creates them. */
  readonly creates: readonly { readonly address: string; readonly storePath: string }[];
  /** Tainted in state and on the store: untainted. */
  readonly untaints: readonly { readonly address: string; readonly storePath: string }[];
  /** Tainted in state, not on the store: forgotten. */
  readonly forgets: readonly { readonly address: string; readonly storePath: string }[];
  /** Tainted in state and no longer declared: left as they are. */
  readonly taintedUndeclared: readonly string[];
  /** What adopt refuses to adopt, with the fix. */
  readonly refused: readonly AdoptionRefusal[];
  /** What applying the imports would destroy (one line each, with the declaration that avoids it). */
  readonly risks: readonly string[];
  /** Mount settings an apply changes, store → declarations. */
  readonly attributeChanges: readonly string[];
  /** Access of the stack's identities, the store as it is → the declarations (the shape of `access-diff --format json`). */
  readonly access: AccessDiff;
  /** Files written or removed in the stack directory (none with `--dry-run`). */
  readonly files: readonly AdoptionFileChange[];
}

/** The one JSON object `secretstore-iac adopt --format json` prints. */
export interface AdoptionJson {
  readonly command: 'adopt';
  /** True with `--dry-run`: no file and no state changed. */
  readonly dryRun: boolean;
  /** Files and directories left by killed runs (relative to the working directory, guard directories whole): removed (or, with `--dry-run`, to remove). */
  readonly leftovers: readonly string[];
  /** Per stack, in the order adopt handled them. */
  readonly stacks: readonly AdoptionJsonStack[];
  /** The stacks planned before writing (empty with `--no-plan-check`, `--dry-run`, or nothing to check). */
  readonly planChecked: readonly string[];
}

/** Splits a plan's conflict line (`ADDRESS: why`): resource addresses never hold `": "`. */
function conflictOf(line: string): AdoptionRefusal {
  const at = line.indexOf(': ');
  return at < 0 ? { address: '', why: 'conflict', message: line } : { address: line.slice(0, at), why: 'conflict', message: line.slice(at + 2) };
}

/**
 * One stack of the adopt JSON, from its adoption plan: what would be imported, created, untainted
 * and forgotten, what is refused with its fix, and the access report. Addresses, store paths,
 * import ids and policies only: the store's secrets (Secret IDs, tokens) are never read by adopt.
 */
export function adoptionJsonStack(plan: AdoptionPlan): AdoptionJsonStack {
  const forgotten = new Set(plan.forgets.map((o) => o.address));
  const object = (o: { address: string; storePath: string }) => ({ address: o.address, storePath: o.storePath });
  return {
    stack: plan.stack,
    inState: plan.inState,
    imports: plan.imports.map((b) => ({ address: b.to, id: b.id })),
    creates: plan.creates.filter((o) => !forgotten.has(o.address)).map(object),
    untaints: plan.untaints.map(object),
    forgets: plan.forgets.map(object),
    taintedUndeclared: [...plan.taintedUndeclared],
    refused: plan.conflicts.map(conflictOf),
    risks: [...plan.risks],
    attributeChanges: [...plan.attributeChanges],
    access: plan.access,
    files: [],
  };
}

/** The plan check's refusals of one stack, each with the fix the text report gives. */
export function planCheckRefusals(destructions: readonly PlannedDestruction[], stack: string): AdoptionRefusal[] {
  return destructions.map((d) => ({ address: d.address, why: 'plan-check', message: describeDestruction(d, stack) }));
}
