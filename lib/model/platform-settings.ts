import { identifierNameProblems } from './identifier-name';
import { KvMount } from './kv-mount';
import { ValidationProblem } from './validation-problem';
import { httpUrlProblems } from '../private/http-url';

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
}

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

  constructor(props: PlatformSettingsProps) {
    this.organisation = props.organisation;
    this.ciUrl = props.ciUrl;
    this.registryHost = props.registryHost;
    this.registryPorts = props.registryPorts ?? { push: 8443, pull: 8444 };
    this.kvMount = props.kvMount ?? KvMount.DEFAULT;
  }

  /** Problems: empty or malformed organisation, CI URL, registry host or ports; placeholders left in. */
  problems(): ValidationProblem[] {
    const problems: ValidationProblem[] = [];
    problems.push(...identifierNameProblems('organisation', this.organisation));
    if (!this.ciUrl) {
      problems.push(new ValidationProblem('ciUrl', this.ciUrl, 'must not be empty: it is the JWT issuer and audience'));
    } else if (httpUrlProblems('ciUrl', this.ciUrl).length > 0) {
      problems.push(...httpUrlProblems('ciUrl', this.ciUrl));
    } else if (this.ciUrl.endsWith('/')) {
      problems.push(
        new ValidationProblem('ciUrl', this.ciUrl, 'must not end with "/": job tokens carry the URL without it as iss and aud'),
      );
    }
    if (!this.registryHost || !/^[A-Za-z0-9.-]+$/.test(this.registryHost)) {
      problems.push(new ValidationProblem('registryHost', this.registryHost, 'must be a host name without scheme, port or placeholders'));
    }
    for (const kind of ['push', 'pull'] as const) {
      const port = this.registryPorts[kind];
      if (!Number.isInteger(port) || port < 1 || port > 65535) {
        problems.push(new ValidationProblem(`registryPorts.${kind}`, port, 'must be a port number 1-65535'));
      }
    }
    problems.push(...this.kvMount.problems('kvMount'));
    return problems;
  }
}
