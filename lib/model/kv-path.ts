import { KV2_API_PREFIXES, KvMount } from './kv-mount';
import { ValidationProblem } from './validation-problem';

const SEGMENT_PATTERN = /^[A-Za-z0-9._-]+$/;

/**
 * A logical secret path on a KV mount: one secret (`registry/svc-orchestrator`) or, with
 * `subtree`, every secret below a prefix (`acme/dev/orchestrator/*`).
 *
 * The logical path is what people say; {@link policyPath} is what an ACL rule must name.
 */
export class KvPath {
  /** One secret. */
  static secret(mount: KvMount, logical: string): KvPath {
    return new KvPath(mount, logical, false);
  }

  /** Every secret below `logical`. */
  static subtree(mount: KvMount, logical: string): KvPath {
    return new KvPath(mount, logical, true);
  }

  private constructor(
    /** The mount the secret lives on. */
    readonly mount: KvMount,
    /** Path below the mount, without `data/`, leading or trailing slashes. */
    readonly logical: string,
    /** True when the path names everything below `logical`. */
    readonly subtree: boolean,
  ) {}

  /** ACL path for reading the data: `secret/data/<logical>` (v2) or `secret/<logical>` (v1), `/*` for a subtree. */
  get policyPath(): string {
    return this.subtree ? `${this.mount.dataPath(this.logical)}/*` : this.mount.dataPath(this.logical);
  }

  /** ACL path of the spec's older form, `secret/<logical>` (plus `/*` for a subtree). */
  get olderFormPolicyPath(): string {
    const base = this.mount.olderFormPath(this.logical);
    return this.subtree ? `${base}/*` : base;
  }

  /** Human form used in reports and problems: `secret/registry/svc-orchestrator (kv-v2)`. */
  toString(): string {
    return `${this.mount.path}/${this.logical}${this.subtree ? '/*' : ''} (kv-v${this.mount.version})`;
  }

  /**
   * True when some secret is addressed by both paths: the same secret, or one lies in the other's
   * subtree. Segment-aware, so `app` does not overlap `app-x`.
   */
  overlaps(other: KvPath): boolean {
    if (this.mount.path !== other.mount.path) return false;
    if (this.logical === other.logical) return true;
    if (this.subtree && other.logical.startsWith(`${this.logical}/`)) return true;
    if (other.subtree && this.logical.startsWith(`${other.logical}/`)) return true;
    return false;
  }

  /** Problems with the logical path: empty segments, `.`/`..`, wildcards, hand-written `data/`. */
  problems(field: string): ValidationProblem[] {
    const problems: ValidationProblem[] = [...this.mount.problems(`${field}.mount`)];
    const logical = this.logical;
    if (typeof logical !== 'string' || logical.length === 0) {
      return [...problems, new ValidationProblem(field, logical, 'must not be empty')];
    }
    if (logical.startsWith('/') || logical.endsWith('/') || logical.includes('//')) {
      problems.push(new ValidationProblem(field, logical, 'must not start or end with "/" nor contain "//"'));
    }
    const segments = logical.split('/').filter((s) => s.length > 0);
    if (segments.some((s) => s === '.' || s === '..')) {
      problems.push(new ValidationProblem(field, logical, 'must not contain "." or ".." segments'));
    }
    if (/[*+]/.test(logical)) {
      problems.push(
        new ValidationProblem(field, logical, 'must not contain ACL wildcards (* or +): declare a subtree instead'),
      );
    }
    const bad = segments.filter((s) => s !== '.' && s !== '..' && !/[*+]/.test(s) && !SEGMENT_PATTERN.test(s));
    if (bad.length > 0) {
      problems.push(
        new ValidationProblem(field, logical, `segments may only hold letters, digits, ".", "_" and "-": ${bad.join(', ')}`),
      );
    }
    if (logical.startsWith(`${this.mount.path}/`)) {
      problems.push(
        new ValidationProblem(field, logical, `must be relative to the mount: drop the leading "${this.mount.path}/"`),
      );
    }
    if (this.mount.version === 2 && KV2_API_PREFIXES.includes(segments[0] ?? '')) {
      problems.push(
        new ValidationProblem(
          field,
          logical,
          `must not start with "${segments[0]}/": the KV v2 API path is derived from the logical path`,
        ),
      );
    }
    return problems;
  }
}
