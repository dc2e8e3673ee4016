import { Construct } from 'constructs';
import { expectGrantees, Grant, IGrantee } from '../model/grant';
import { CheckedProps, expectString, expectStringArray, optional, PropsSchema } from '../model/props-check';
import { freeTextProblems, VISIBLE_TEXT_NOTE, visibleLength } from '../model/free-text';
import { KvPath } from '../model/kv-path';
import { SecretDeclaration } from '../model/secret-declaration';
import { ValidationProblem } from '../model/validation-problem';
import { SecretStoreStack } from './secret-store-stack';

/** Properties of {@link CiSecret}. */
export interface CiSecretProps {
  /** Logical path on the platform's KV mount, without `data/` (`codequality/svc-orchestrator`). */
  readonly path: string;
  /** Keys the consumers read (`token`, `url`). */
  readonly keys: readonly string[];
  /** CI jobs that read it, as kebab-case ids (`code-quality-scan`). */
  readonly consumers: readonly string[];
  /** What the secret is for, in words. */
  readonly description: string;
  /**
   * Identities granted read at declaration.
   * @default []
   */
  readonly readers?: readonly IGrantee[];
}

/** The run-time checks of {@link CiSecretProps}. */
export const CI_SECRET_SCHEMA: PropsSchema = {
  path: expectString,
  keys: expectStringArray,
  consumers: expectStringArray,
  description: expectString,
  readers: optional(expectGrantees),
};

/**
 * A secret a CI job reads through the store (spec §2.3): code-quality token, vulnerability-import
 * token, end-to-end test user, test-report key. Its values are put in the store by people, never
 * by the library.
 */
export class CiSecret extends Construct {
  /** The declaration: path, keys, consumers. */
  readonly secret: SecretDeclaration;
  /** What the secret is for. */
  readonly description: string;

  constructor(scope: Construct, id: string, props: CiSecretProps) {
    super(scope, id);
    const settings = SecretStoreStack.of(this).settings;
    const checked = (this.checked = new CheckedProps(CI_SECRET_SCHEMA, props));
    this.description = checked.value('description', '');
    this.secret = new SecretDeclaration({
      path: KvPath.secret(settings.kvMount, checked.value('path', '')),
      keys: checked.value('keys', []),
      consumers: checked.value('consumers', []),
    });
    checked.value<readonly IGrantee[]>('readers', []).forEach((r) => this.grantRead(r));
    this.node.addValidation({ validate: () => this.problems().map(String) });
  }

  /**
   * Grants read on the secret to an identity.
   * @returns the grants added
   */
  grantRead(grantee: IGrantee): Grant[] {
    return this.secret.grantRead(grantee, this.node.path);
  }

  private readonly checked: CheckedProps;

  private problems(): ValidationProblem[] {
    return this.checked.with(this.valueProblems());
  }

  private valueProblems(): ValidationProblem[] {
    const problems = this.secret.problems();
    if (this.secret.consumers.length === 0) {
      problems.push(new ValidationProblem('consumers', [], 'must name at least one consuming job'));
    }
    if (visibleLength(this.description) === 0) {
      problems.push(new ValidationProblem('description', this.description, `must say what the secret is for (${VISIBLE_TEXT_NOTE})`));
    } else {
      problems.push(...freeTextProblems('description', this.description));
    }
    return problems;
  }
}
