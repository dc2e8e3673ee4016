import { aclPathsOverlap } from './acl-path-overlap';
import { KV2_API_PREFIXES, KV2_SECRET_API_PREFIXES, KvMount } from './kv-mount';
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
   * Every ACL path at which the store can serve this path's secrets, whatever KV version the mount
   * really has (the store applies its own version, not the declared one): `<mount>/<logical>`
   * (version 1) and `<mount>/<prefix>/<logical>` for each KV v2 API prefix that addresses a secret
   * (`data`, `metadata`, `delete`, `undelete`, `destroy`, `subkeys`); for a subtree, each with `/*`
   * and also the subtree's own path (conservative: a secret named like an application's prefix is
   * an overlap, as it always was).
   */
  get apiPaths(): readonly string[] {
    // Kept: the overlap rules compare every pair of declared paths.
    if (this.apiPathsCache === undefined) {
      const bases = [`${this.mount.path}/${this.logical}`, ...KV2_SECRET_API_PREFIXES.map((prefix) => `${this.mount.path}/${prefix}/${this.logical}`)];
      this.apiPathsCache = this.subtree ? bases.flatMap((b) => [`${b}/*`, b]) : bases;
    }
    return this.apiPathsCache;
  }

  private apiPathsCache?: readonly string[];

  /**
   * An ACL path at which the store could serve a secret of both paths, or undefined: the paths'
   * {@link apiPaths} compared the way the store matches ACL paths (a `*` path is a plain string
   * prefix). Mount paths are compared as store paths too, so a mount `secret/data` meets the v2
   * data paths of `secret`.
   * @returns the more specific of the first two API paths that meet
   */
  sharedApiPath(other: KvPath): string | undefined {
    for (const a of this.apiPaths) {
      for (const b of other.apiPaths) {
        if (aclPathsOverlap(a, b)) return moreSpecific(a, b);
      }
    }
    return undefined;
  }

  /**
   * True when some secret is addressed by both paths on the store, whatever KV version each mount
   * really has: the same secret, or one lies in the other's subtree ({@link sharedApiPath}).
   * Segment-aware, so `app` does not overlap `app-x`.
   */
  overlaps(other: KvPath): boolean {
    // A path that is not text is reported by problems(); the rules must not crash on it.
    if (typeof this.logical !== 'string' || typeof other.logical !== 'string') return false;
    const a = `${this.mount.path}/`;
    const b = `${other.mount.path}/`;
    // Every API path starts with its mount path: unrelated mounts never meet.
    if (!a.startsWith(b) && !b.startsWith(a)) return false;
    // Fast path (the rules compare every pair): on one mount, with no logical path starting with
    // a KV v2 API prefix, the API paths meet exactly when the logical paths do.
    if (a === b && !this.startsWithApiPrefix && !other.startsWithApiPrefix) {
      if (this.logical === other.logical) return true;
      if (this.subtree && other.logical.startsWith(`${this.logical}/`)) return true;
      return other.subtree && this.logical.startsWith(`${other.logical}/`);
    }
    return this.sharedApiPath(other) !== undefined;
  }

  /** True when the first segment of the logical path is a KV v2 API prefix (refused by {@link problems}). */
  private get startsWithApiPrefix(): boolean {
    // Kept: asked for every pair the rules compare.
    return (this.startsWithApiPrefixCache ??= KV2_API_PREFIXES.includes(String(this.logical).split('/')[0]));
  }

  private startsWithApiPrefixCache?: boolean;

  /**
   * True when the logical path is text that does not start with a KV v2 API prefix: two such paths
   * on one mount overlap exactly when the logical paths are equal or one is a subtree above the
   * other ({@link overlaps}), which lets the rules index them instead of comparing every pair.
   */
  get isPlainLogicalPath(): boolean {
    return typeof this.logical === 'string' && !this.startsWithApiPrefix;
  }

  /**
   * True when the ACL paths the declarations grant ({@link policyPath}, under each declared
   * version) overlap as text; false when the paths meet only on the store ({@link overlaps} but
   * not this), through a mount whose real version or path differs from a declaration.
   */
  policyPathsOverlap(other: KvPath): boolean {
    // A subtree covers its own path too, as in overlaps().
    const granted = (p: KvPath) => (p.subtree ? [p.policyPath, p.mount.dataPath(p.logical)] : [p.policyPath]);
    return granted(this).some((a) => granted(other).some((b) => aclPathsOverlap(a, b)));
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
    const first = segments[0] ?? '';
    if (KV2_API_PREFIXES.includes(first)) {
      problems.push(
        new ValidationProblem(
          field,
          logical,
          this.mount.version === 2
            ? `must not start with "${first}/": the KV v2 API path is derived from the logical path`
            : `must not start with "${first}/", even on a KV v1 mount: "${first}" is a KV v2 API prefix, so if ${this.mount.path}/ is (or becomes) KV v2 on the store, ${this.mount.path}/${logical} addresses ${kv2Target(first, segments.slice(1).join('/'))} (the store applies its own KV version, not the declared one)`,
        ),
      );
    }
    return problems;
  }
}

/** Of two overlapping ACL paths, the one that matches fewer requests: an exact path, else the longer prefix. */
function moreSpecific(a: string, b: string): string {
  const aPrefix = a.endsWith('*');
  const bPrefix = b.endsWith('*');
  if (aPrefix !== bPrefix) return aPrefix ? b : a;
  return a.length >= b.length ? a : b;
}

/** What a KV v2 API path `<prefix>/<rest>` addresses, in words. */
function kv2Target(prefix: string, rest: string): string {
  if (prefix === 'config') return "the mount's configuration endpoint";
  return rest === '' ? `the ${prefix} endpoint of the mount` : `the ${prefix === 'data' ? 'data' : prefix} of the secret "${rest}"`;
}
