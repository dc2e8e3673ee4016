import * as path from 'path';
import { Construct } from 'constructs';
import { AccessInvariant } from '../invariants/access-invariant';
import { readInvariantDeclaration } from '../invariants/invariant-declaration';
import { readInvariantsFile } from '../invariants/invariants-file';
import { ValidationProblem } from '../model/validation-problem';

/** Properties of {@link AccessInvariants}. */
export interface AccessInvariantsProps {
  /** Invariants declared in code. */
  readonly invariants?: readonly AccessInvariant[];
  /**
   * A security team's invariants file (JSON or YAML, docs/invariants.md), read at construction:
   * the same file `access-diff --invariants`, `invariants check` and `usage --invariants` read.
   */
  readonly file?: string;
}

/**
 * A security team's access invariants, statements of access that must never be granted ("no CI
 * identity reads `secret/data/+/prod/*`"): checked at every synthesis by rule SSI-R16 against every
 * role the platform declares. It synthesizes nothing; put it anywhere in the app (once or more:
 * every one counts).
 */
export class AccessInvariants extends Construct {
  /** The invariants without a problem, in the order declared (code first, then the file). */
  readonly invariants: readonly AccessInvariant[];

  constructor(scope: Construct, id: string, props: AccessInvariantsProps = {}) {
    super(scope, id);
    const problems: ValidationProblem[] = [];
    const invariants: AccessInvariant[] = [];
    if (props.invariants !== undefined) {
      const declared = readInvariantDeclaration(props.invariants);
      problems.push(...declared.problems);
      invariants.push(...declared.invariants);
    }
    if (props.file !== undefined) {
      try {
        invariants.push(...readInvariantsFile(path.resolve(props.file)));
      } catch (error) {
        problems.push(new ValidationProblem('file', props.file, (error as Error).message.replace(/\n\s*/g, '; ')));
      }
    }
    if (props.invariants === undefined && props.file === undefined) problems.push(new ValidationProblem('invariants', undefined, 'give invariants, a file, or both'));
    this.invariants = invariants;
    this.node.addValidation({ validate: () => problems.map(String) });
  }
}
