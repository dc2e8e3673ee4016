import { ValidationProblem } from './validation-problem';

/** The secrets stores the library targets. */
export const STORE_KINDS = ['openbao', 'vault'] as const;

/** One store kind: OpenBao or HashiCorp Vault. */
export type StoreKind = (typeof STORE_KINDS)[number];

/** The CLI (and agent and proxy binary) of a store kind: OpenBao's `bao`, HashiCorp Vault's `vault`. */
export type StoreCli = 'bao' | 'vault';

/** The store a configuration targets, as given in `PlatformSettingsProps.store`. */
export interface StoreTargetProps {
  /** `openbao` or `vault`. */
  readonly kind: StoreKind;
  /** The server version (`2.4.0`, `1.21.1`), when known: some ACL semantics depend on it. */
  readonly version?: string;
}

const VERSION = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/;

/**
 * The store a configuration or a live command talks to, and the facts that depend on it: its CLI,
 * its product name, and version comparisons. Every store-specific fact of the library
 * (capabilities, the built-in `default` policy, reserved names, LIST semantics) is looked up with
 * one of these; see docs/stores.md.
 */
export class StoreTarget {
  /** The default target: OpenBao, version unknown. */
  static readonly DEFAULT = new StoreTarget('openbao');

  /** True when `value` names a store kind. */
  static isKind(value: unknown): value is StoreKind {
    return typeof value === 'string' && (STORE_KINDS as readonly string[]).includes(value);
  }

  /**
   * The store that answered `GET sys/seal-status`, or undefined when the answer names no version.
   * Both stores answer with the same fields (`version`, `build_date`, `cluster_name`, ...; seen on
   * OpenBao 2.4.0 and Vault 1.21.1), so the kind is read from the version's major number: OpenBao
   * releases are 2.x, Vault's 1.x. A Vault 2.x reads as OpenBao: name it in `settings.store`.
   */
  static fromSealStatus(body: unknown): StoreTarget | undefined {
    if (body === null || typeof body !== 'object') return undefined;
    const version = (body as Record<string, unknown>).version;
    if (typeof version !== 'string') return undefined;
    const m = VERSION.exec(version.trim());
    if (!m) return undefined;
    const plain = `${m[1]}.${m[2]}.${m[3]}`;
    return new StoreTarget(Number(m[1]) >= 2 ? 'openbao' : 'vault', plain);
  }

  constructor(
    /** The store kind. */
    readonly kind: StoreKind,
    /** The server version (`major.minor.patch`), when known. */
    readonly version?: string,
  ) {}

  /** The product's name, as messages name it. */
  get productName(): string {
    return this.kind === 'vault' ? 'HashiCorp Vault' : 'OpenBao';
  }

  /** The store's CLI, agent and proxy binary (`bao` or `vault`). */
  get cli(): StoreCli {
    return this.kind === 'vault' ? 'vault' : 'bao';
  }

  /**
   * Compares the version with `other`.
   * @returns true when the version is at least `other`, false when below, undefined when unknown
   */
  atLeast(other: string): boolean | undefined {
    const a = this.version ? VERSION.exec(this.version) : null;
    const b = VERSION.exec(other);
    if (!a || !b) return undefined;
    for (let i = 1; i <= 3; i++) {
      if (Number(a[i]) !== Number(b[i])) return Number(a[i]) > Number(b[i]);
    }
    return true;
  }

  /**
   * The CLI to name in a fix for the store that sent `body` (a `sys/health` or `sys/seal-status`
   * answer, which both carry `version`): `bao` or `vault`, or both names when the answer tells neither.
   */
  static cliNamed(body: unknown): string {
    return StoreTarget.fromSealStatus(body)?.cli ?? 'bao (or vault)';
  }

  /** Problems of a given `store` setting: an unknown kind, a version that is not `major.minor.patch`. */
  static problems(field: string, props: StoreTargetProps): ValidationProblem[] {
    const problems: ValidationProblem[] = [];
    if (!StoreTarget.isKind(props.kind)) {
      problems.push(new ValidationProblem(`${field}.kind`, props.kind, `must be one of ${STORE_KINDS.map((k) => `"${k}"`).join(', ')}`));
    }
    if (props.version !== undefined && (typeof props.version !== 'string' || !VERSION.test(props.version))) {
      problems.push(new ValidationProblem(`${field}.version`, props.version, 'must be a version "major.minor.patch" (2.4.0, 1.21.1)'));
    }
    return problems;
  }

  /** `openbao 2.4.0`, `vault` (version unknown). */
  toString(): string {
    return this.version ? `${this.kind} ${this.version}` : this.kind;
  }
}
