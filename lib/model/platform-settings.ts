import { identifierNameProblems } from './identifier-name';
import { KvMount } from './kv-mount';
import { ValidationProblem } from './validation-problem';
import { canonicalStoreNamespace, storeNamespaceProblems } from './store-namespace';
import { httpUrlProblems } from './http-url';
import { hostNameProblems } from './host-name';
import { STORE_KINDS, StoreTarget, StoreTargetProps } from './store-target';
import {
  checked,
  checkProps,
  expectEnum,
  expectInstance,
  expectNumber,
  expectShape,
  expectString,
  isPlainRecord,
  kindOf,
  expectStringArray,
  optional,
  ownValue,
  PropsSchema,
  withTypeProblems,
} from './props-check';

/** The platform facts every declaration depends on: the spec's placeholders, filled in. */
export interface PlatformSettingsProps {
  /** `{org}`: the organisation directory name, first segment of application paths (`acme`). */
  readonly organisation: string;
  /** `{ci_url}`: the CI system's address; JWT issuer and audience (`https://gitlab.acme.example`). */
  readonly ciUrl: string;
  /** `{registry_host}`: the artifact registry's host name. */
  readonly registryHost: string;
  /**
   * Registry login ports (spec §2.2).
   * @default { push: 8443, pull: 8444 }
   */
  readonly registryPorts?: { readonly push: number; readonly pull: number };
  /**
   * The KV mount that holds the platform's secrets.
   * @default KvMount.DEFAULT (`secret/`, KV version 2)
   */
  readonly kvMount?: KvMount;
  /**
   * Hosts the platform may reach over plain `http://` (a lab, a test store), compared without port and
   * case. Every URL the configuration holds (CI URL, JWT key URLs, the agents' store address, the e2e
   * target) must otherwise be `https://`, except to this machine (`localhost`, `127.0.0.0/8`, `::1`),
   * which is always allowed: plain http elsewhere lets anyone on the network read and change the
   * traffic, tokens included.
   * @default none
   */
  readonly insecureHttpHosts?: readonly string[];
  /**
   * The store the platform runs on: `openbao` or `vault`, and its version when known. It decides
   * what synthesis accepts (capabilities the store knows, mount paths it reserves), which built-in
   * `default` policy and LIST semantics the access analysis uses, and the agent binary the
   * generated entrypoints run (docs/stores.md). The live commands read the kind and version of the
   * store they talk to from `sys/seal-status` instead.
   * @default { kind: 'openbao' } (version unknown)
   */
  readonly store?: StoreTargetProps;
  /**
   * The store namespace every stack, the tools, the CI login and the agents work in (OpenBao
   * namespaces; HashiCorp Vault Enterprise and HCP Vault, whose top namespace is `admin`). The
   * vault provider of every stack is given it, the generated CI login and agent/proxy files send
   * it, and the CLI uses it unless `VAULT_NAMESPACE` / `BAO_NAMESPACE` says the same or disagrees
   * (then it stops): docs/operators.md#namespaces.
   * @default none: the root namespace
   */
  readonly namespace?: string;
}

/** The run-time checks of {@link PlatformSettingsProps}. */
export const PLATFORM_SETTINGS_SCHEMA: PropsSchema = {
  organisation: expectString,
  ciUrl: expectString,
  registryHost: expectString,
  registryPorts: optional(expectShape({ push: expectNumber, pull: expectNumber }, 'an object { push, pull } of port numbers')),
  kvMount: optional(expectInstance(KvMount, "a KvMount (new KvMount('secret', 2))")),
  insecureHttpHosts: optional(expectStringArray),
  store: optional(expectShape({ kind: expectEnum(STORE_KINDS), version: optional(expectString) }, "an object { kind: 'openbao' | 'vault', version? }")),
  namespace: optional(expectString),
};

const DEFAULT_REGISTRY_PORTS = { push: 8443, pull: 8444 };

/** Validated platform settings with defaults applied. */
export class PlatformSettings {
  /** Organisation directory name. */
  readonly organisation: string;
  /** CI system URL (issuer and audience of job tokens). */
  readonly ciUrl: string;
  /** Registry host name. */
  readonly registryHost: string;
  /** Registry login ports. */
  readonly registryPorts: { readonly push: number; readonly pull: number };
  /** KV mount of the platform's secrets. */
  readonly kvMount: KvMount;
  /** Hosts besides loopback that URLs may reach over plain http. */
  readonly insecureHttpHosts: readonly string[];
  /** The target store (default OpenBao, version unknown). */
  readonly store: StoreTarget;
  /** True when `store` was given: without it, reserved names of either store are refused. */
  readonly storeGiven: boolean;
  /** The store namespace, canonical (`admin/team`); undefined for the root namespace. */
  readonly namespace?: string;
  private readonly namespaceGiven?: string;
  private readonly typeProblems: ValidationProblem[];
  private readonly givenProps: unknown;

  constructor(props: PlatformSettingsProps) {
    // Values of the wrong type (from JSON or a cast) are replaced by harmless ones and reported.
    this.typeProblems = isPlainRecord(props)
      ? checkProps(PLATFORM_SETTINGS_SCHEMA, props)
      : [new ValidationProblem('', props, `must be an object of platform settings { organisation, ciUrl, registryHost, ... }, not ${kindOf(props)}`)];
    const s = PLATFORM_SETTINGS_SCHEMA;
    const given: unknown = (this.givenProps = props);
    const read = <T>(key: string, fallback: T): T => checked(s[key], ownValue(given, key), fallback) ?? fallback;
    this.organisation = read('organisation', '');
    this.ciUrl = read('ciUrl', '');
    this.registryHost = read('registryHost', '');
    this.registryPorts = read('registryPorts', DEFAULT_REGISTRY_PORTS);
    this.kvMount = read('kvMount', KvMount.DEFAULT);
    this.insecureHttpHosts = [...read<readonly string[]>('insecureHttpHosts', [])];
    const store = read<StoreTargetProps | undefined>('store', undefined);
    this.storeGiven = store !== undefined;
    this.store = store ? new StoreTarget(store.kind, store.version) : StoreTarget.DEFAULT;
    this.namespaceGiven = read<string | undefined>('namespace', undefined);
    this.namespace = this.namespaceGiven === undefined ? undefined : canonicalStoreNamespace(this.namespaceGiven);
  }

  /** What the URL checks allow of plain http. */
  get httpPolicy(): { readonly insecureHttpHosts: readonly string[] } {
    return { insecureHttpHosts: this.insecureHttpHosts };
  }

  /** Problems: empty or malformed organisation, CI URL, registry host or ports; placeholders left in. */
  problems(): ValidationProblem[] {
    // Settings that are not an object have no field to check.
    if (!isPlainRecord(this.givenProps)) return [...this.typeProblems];
    return withTypeProblems(this.typeProblems, this.valueProblems());
  }

  private valueProblems(): ValidationProblem[] {
    const problems: ValidationProblem[] = [];
    problems.push(...identifierNameProblems('organisation', this.organisation));
    if (!this.ciUrl) {
      problems.push(new ValidationProblem('ciUrl', this.ciUrl, 'must not be empty: it is the JWT issuer and audience'));
    } else if (httpUrlProblems('ciUrl', this.ciUrl, this.httpPolicy).length > 0) {
      problems.push(...httpUrlProblems('ciUrl', this.ciUrl, this.httpPolicy));
    } else if (this.ciUrl.endsWith('/')) {
      problems.push(
        new ValidationProblem('ciUrl', this.ciUrl, 'must not end with "/": job tokens carry the URL without it as iss and aud'),
      );
    }
    problems.push(...hostNameProblems('registryHost', this.registryHost));
    this.insecureHttpHosts.forEach((h, i) => problems.push(...hostNameProblems(`insecureHttpHosts[${i}]`, h)));
    for (const kind of ['push', 'pull'] as const) {
      const port = this.registryPorts[kind];
      if (!Number.isInteger(port) || port < 1 || port > 65535) {
        problems.push(new ValidationProblem(`registryPorts.${kind}`, port, 'must be a port number 1-65535'));
      }
    }
    problems.push(...this.kvMount.problems('kvMount'));
    if (this.storeGiven) problems.push(...StoreTarget.problems('store', this.store));
    if (this.namespaceGiven !== undefined) problems.push(...storeNamespaceProblems('namespace', this.namespaceGiven));
    return problems;
  }
}
