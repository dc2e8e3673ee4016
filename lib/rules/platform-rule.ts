import type { PlatformDeclarations } from '../constructs/platform-declarations';
import { ValidationProblem } from '../model/validation-problem';

/** A problem found by a platform rule, attached to the construct that breaks it. */
export interface RuleFinding {
  /** Construct path of the offending declaration. */
  readonly constructPath: string;
  /** The problem, carrying the rule id. */
  readonly problem: ValidationProblem;
}

/**
 * A rule over the whole platform (all stacks at once), in the manner of cdk-nag: a stable id, a
 * one-line description, and a check that returns findings. Rules see every declaration, so they
 * catch what no single construct can: duplicates and cross-application access.
 */
export interface PlatformRule {
  /** Stable rule id, `SSI-R<n>`. */
  readonly id: string;
  /** What the rule requires, one sentence (the rule text of RULES.md). */
  readonly description: string;
  /** The section of the platform spec the rule enforces (`§2.1`), when it enforces one. */
  readonly spec?: string;
  /** Finds the declarations that break the rule. */
  check(declarations: PlatformDeclarations): RuleFinding[];
}
