import { PolicyParser } from '../acl/policy-parser';
import { compareStrings } from '../private/compare-strings';
import { mdCode } from '../render/markdown-text';
import { SavedPlan } from '../sources/saved-plan';
import { SynthStack } from '../sources/synth-output';
import { templateParts } from '../sources/terraform-reference';
import { AccessDiff, AccessDiffOptions, diffAccess, hasAccessChange } from './access-diff';
import { AccessModel, IdentityAccessMemo } from './access-model';
import { planStoreConfigurations } from './plan-store-configuration';
import { OverriddenDeclaration } from './store-configuration';
import { RiskFlag, sortRiskFlags } from './risk-flag';

/** One saved plan the review read, as the note names it. */
export interface ReviewedPlan {
  /** The stack. */
  readonly stack: string;
  /** The file given (a plan file, or the JSON of `show -json` of one). */
  readonly file: string;
  /** SHA-256 of that file, hex. */
  readonly sha256: string;
  /** The engine version the plan records. */
  readonly engineVersion?: string;
}

/** The access review of saved plans: the access diff of applying them, and what it was read from. */
export interface PlanReview {
  /** Access before (the refreshed state) → after (the planned values), with the plans' own flags. */
  readonly diff: AccessDiff;
  /** The plans read, sorted by stack. */
  readonly plans: readonly ReviewedPlan[];
  /** Stacks of the synthesized output without a plan, read from the synthesis on both sides. */
  readonly unplanned: readonly string[];
  /**
   * False when a value the review reads is unknown until apply, a resource it cannot read changes,
   * the engine marks a plan incomplete, or a plan's vault provider is configured otherwise than the
   * synthesis: the diff then does not say everything the apply will do.
   */
  readonly complete: boolean;
}

/**
 * Reviews saved plans: the access of the store before (each plan's refreshed prior state) and
 * after applying them (each plan's planned values), compared; the other stacks of the synthesized
 * output are read from the synthesis on both sides. Values unknown until apply and changes to
 * resources the review cannot read are risk flags, never guessed.
 * @throws Error naming the stack for a plan that cannot be read into a configuration
 */
export async function reviewSavedPlans(
  synthesized: readonly SynthStack[],
  plans: readonly SavedPlan[],
  parser = new PolicyParser(),
  options: AccessDiffOptions = {},
): Promise<PlanReview> {
  const sides = planStoreConfigurations(synthesized, plans);
  // One memo beside the shared parser: an identity of a stack without a plan is evaluated once for both sides.
  const memo = new IdentityAccessMemo();
  const [base, head] = await Promise.all([AccessModel.load(sides.base, parser, memo), AccessModel.load(sides.head, parser, memo)]);
  const diff = diffAccess(base, head, options);
  const namespaces = new Map(synthesized.map((s) => [s.name, s.namespace]));
  const own = [...savedPlanFlags(plans), ...plans.flatMap((p) => providerFlags(p, namespaces.get(p.stack) ?? ''))];
  const overrides = sides.overridden.map(overrideFlag);
  return {
    diff: { ...diff, flags: sortRiskFlags([...own, ...overrides, ...diff.flags]) },
    plans: [...plans]
      .sort((a, b) => compareStrings(a.stack, b.stack))
      .map((p) => ({ stack: p.stack, file: p.file, sha256: p.sha256, ...(p.engineVersion !== undefined ? { engineVersion: p.engineVersion } : {}) })),
    unplanned: sides.unplanned,
    complete: own.length === 0,
  };
}

/** True when the review must be looked at: access changed, or the plans hold what it cannot read (the exit code 1). */
export function planReviewNeedsAttention(review: PlanReview): boolean {
  return hasAccessChange(review.diff) || !review.complete;
}

/** A plan writing a policy or identity over another stack's different declaration of it. */
function overrideFlag(o: OverriddenDeclaration): RiskFlag {
  return {
    kind: 'plan-overrides',
    identity: o.name,
    identities: o.kind === 'identity' ? [o.name] : [],
    message: `the plan of stack ${mdCode(o.stack)} writes the ${o.kind} ${mdCode(o.name)} that stack ${mdCode(o.over)} declares differently: after this apply the store has the plan's (shown here); applying ${mdCode(o.over)} again writes its own back`,
  };
}

/**
 * The vault provider of a plan configured otherwise than the synthesis configures it (only its
 * `namespace`, when `settings.namespace` is given): an address, a token, another namespace or an
 * aliased second provider (an override file can add each) means the plan's objects are written to,
 * and its "before" read from, somewhere the review does not describe.
 */
function providerFlags(plan: SavedPlan, synthesizedNamespace: string): RiskFlag[] {
  const expected = templateParts(synthesizedNamespace, () => new Error(`stack ${plan.stack}: the synthesized provider namespace is not a literal`))
    .map((p) => p.literal)
    .join('');
  const problems: string[] = [];
  for (const provider of plan.providers) {
    if (provider.key !== 'vault') {
      problems.push(`a second vault provider ${mdCode(provider.key)}`);
      continue;
    }
    for (const [argument, expression] of Object.entries(provider.expressions)) {
      const constant = (expression as { constant_value?: unknown })?.constant_value;
      if (argument === 'namespace' && constant === expected) continue;
      problems.push(`its ${mdCode(argument)} set${typeof constant === 'string' && argument !== 'token' ? ` to ${mdCode(constant)}` : ''}`);
    }
  }
  if (expected !== '' && !plan.providers.some((p) => p.key === 'vault' && (p.expressions.namespace as { constant_value?: unknown })?.constant_value === expected)) {
    problems.push(`no ${mdCode('namespace')} ${mdCode(expected)} (the synthesis gives it)`);
  }
  if (problems.length === 0) return [];
  return [
    {
      kind: 'plan-unreviewed',
      identity: `${plan.stack}: provider vault`,
      identities: [],
      message: `the plan's vault provider is configured otherwise than the synthesis: ${problems.join('; ')}: its objects may be written to, and its "before" read from, another store or namespace than this note describes`,
    },
  ];
}

/** The flags a plan raises by itself: each value read that is unknown until apply, each change the review cannot read. */
function savedPlanFlags(plans: readonly SavedPlan[]): RiskFlag[] {
  const flags: RiskFlag[] = [];
  for (const plan of plans) {
    if (plan.partial) {
      flags.push({
        kind: 'plan-unknown',
        identity: `${plan.stack}: ${plan.file}`,
        identities: [],
        message: 'the engine marks this plan incomplete (`"complete": false`): what it leaves for a later plan is not in this note',
      });
    }
    for (const u of plan.unknowns) {
      flags.push({
        kind: 'plan-unknown',
        identity: `${plan.stack}: ${u.address}`,
        identities: [],
        message: `${mdCode(u.attribute)} is known only after apply: the review cannot say what it grants, and reads it as granting nothing; make the value known at plan time (no attribute computed by the apply), or review after apply with \`access-diff live\``,
      });
    }
    for (const c of plan.unreviewed) {
      if (c.namespace !== undefined) {
        flags.push({
          kind: 'plan-unreviewed',
          identity: `${plan.stack}: ${c.address}`,
          identities: [],
          message: `${mdCode(c.actions.join(', '))} in the namespace ${mdCode(c.namespace)} of its own (its \`namespace\` attribute, which the library never sets): the review reads every object as written in the stack's namespace`,
        });
        continue;
      }
      flags.push({
        kind: 'plan-unreviewed',
        identity: `${plan.stack}: ${c.address}`,
        identities: [],
        message: `${mdCode(c.actions.join(', '))} of a ${mdCode(c.type)}, a resource the access review does not read (the library synthesizes no such resource): what it does to the store is not in this note`,
      });
    }
  }
  return flags;
}
