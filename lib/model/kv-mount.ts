import { ValidationProblem } from './validation-problem';

/** KV secrets engine versions the library can address. */
export type KvVersion = 1 | 2;

/**
 * Sub-paths a KV version 2 mount reserves for its API; a logical path never starts with them, on
 * either version (on version 1 they would be the v2 API path of another secret once the mount is,
 * or turns out to be, version 2).
 */
export const KV2_API_PREFIXES = ['data', 'metadata', 'delete', 'undelete', 'destroy', 'subkeys', 'config'];

/**
 * The KV version 2 API prefixes that address one secret (its data, metadata, versions, keys), as
 * opposed to `config`, which addresses the mount.
 */
export const KV2_SECRET_API_PREFIXES = ['data', 'metadata', 'delete', 'undelete', 'destroy', 'subkeys'];

/**
 * A KV secrets engine mount, such as the store's default `secret/` (KV version 2).
 *
 * The mount turns logical secret paths (`registry/svc-orchestrator`) into the API and policy paths
 * the store checks (`secret/data/registry/svc-orchestrator` on version 2, `secret/registry/...` on
 * version 1), so that nobody writes `data/` by hand.
 */
export class KvMount {
  /** The store's default mount: `secret/`, KV version 2. */
  static readonly DEFAULT = new KvMount('secret', 2);

  /**
   * @param path mount path without slashes, default `secret`
   * @param version KV engine version, default 2
   */
  constructor(
    readonly path: string = 'secret',
    readonly version: KvVersion = 2,
  ) {}

  /** Path a read or write of the secret's data is checked against. */
  dataPath(logical: string): string {
    return this.version === 2 ? `${this.path}/data/${logical}` : `${this.path}/${logical}`;
  }

  /** Path of the secret's metadata (version 2), or its data path on version 1. */
  metadataPath(logical: string): string {
    return this.version === 2 ? `${this.path}/metadata/${logical}` : `${this.path}/${logical}`;
  }

  /**
   * The spec's "older form", `secret/<logical>`, which version 1 serves and clients of the
   * registry-account flow still request.
   */
  olderFormPath(logical: string): string {
    return `${this.path}/${logical}`;
  }

  /** Problems with the mount itself. */
  problems(field = 'mount'): ValidationProblem[] {
    const problems: ValidationProblem[] = [];
    if (typeof this.path !== 'string' || !/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/.test(this.path)) {
      problems.push(
        new ValidationProblem(`${field}.path`, this.path, 'must be a mount path without leading or trailing slash'),
      );
    }
    if (this.version !== 1 && this.version !== 2) {
      problems.push(new ValidationProblem(`${field}.version`, this.version, 'must be 1 or 2'));
    }
    return problems;
  }
}
