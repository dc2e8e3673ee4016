import { Capability } from './capability';
import { Grant, IGrantee } from './grant';
import { identifierNameProblems } from './identifier-name';
import { KvPath } from './kv-path';
import { ValidationProblem } from './validation-problem';

/** What a secret declaration says: where, which keys, who consumes it. */
export interface SecretDeclarationProps {
  /** Where the secret lives. */
  readonly path: KvPath;
  /** Keys the consumers read (`username`, `password`). Values are never known to the library. */
  readonly keys: readonly string[];
  /** CI jobs or components that read it, as kebab-case ids (`image-build`, `e2e-test`). */
  readonly consumers: readonly string[];
  /**
   * Also grant the spec's older form (`secret/<logical>`) when granting read.
   * @default false
   */
  readonly olderFormGrant?: boolean;
}

const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A secret the platform reads but does not write: the store holds it, people put the values in,
 * and the library only grants read access to it.
 */
export class SecretDeclaration {
  /** Where the secret lives. */
  readonly path: KvPath;
  /** Keys, sorted and unique. */
  readonly keys: readonly string[];
  /** Consumers, sorted and unique. */
  readonly consumers: readonly string[];
  /** Whether read grants include the older-form path. */
  readonly olderFormGrant: boolean;
  private readonly grantsGiven: Grant[] = [];

  constructor(props: SecretDeclarationProps) {
    this.path = props.path;
    // Only lists of text count (`keys: 'token'` would spread into five keys); the constructs report the rest.
    const texts = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
    this.keys = [...new Set(texts(props.keys))].sort();
    this.consumers = [...new Set(texts(props.consumers))].sort();
    this.olderFormGrant = props.olderFormGrant === true;
  }

  /** ACL paths a read grant names. */
  get readPolicyPaths(): string[] {
    const paths = [this.path.policyPath];
    if (this.olderFormGrant && this.path.olderFormPolicyPath !== this.path.policyPath) {
      paths.push(this.path.olderFormPolicyPath);
    }
    return paths;
  }

  /**
   * Grants `read` on the secret (and its older form, if declared) to `grantee`.
   * @param source the declaring construct's path, for the policy comment
   * @returns one grant per ACL path
   */
  grantRead(grantee: IGrantee, source: string): Grant[] {
    const capabilities: Capability[] = ['read'];
    const grants = this.readPolicyPaths.map((p) => Grant.onPath(grantee, p, capabilities, source));
    this.grantsGiven.push(...grants);
    return grants;
  }

  /** Every grant given so far. */
  get grants(): readonly Grant[] {
    return this.grantsGiven;
  }

  /** Problems with the path, keys and consumers. */
  problems(): ValidationProblem[] {
    const problems = this.path.problems('path');
    if (this.keys.length === 0) problems.push(new ValidationProblem('keys', [], 'must name at least one key'));
    for (const key of this.keys) {
      if (!KEY_PATTERN.test(key)) {
        problems.push(new ValidationProblem('keys', key, 'must be letters, digits and "_", not starting with a digit'));
      }
    }
    this.consumers.forEach((c) => problems.push(...identifierNameProblems('consumers', c)));
    return problems;
  }
}
