import { AgentConfigurationsProps, Duration, JwtKeySource, PlatformSettingsProps } from '../lib';

/** Everything that differs between installations of the platform. */
export interface PlatformConfig {
  /** The spec's placeholders: organisation, CI URL, registry host (and optional ports / KV mount). */
  readonly settings: PlatformSettingsProps;
  /**
   * Keys that verify CI job tokens.
   * @default OIDC discovery at `settings.ciUrl`
   */
  readonly ciKeySource?: JwtKeySource;
  /**
   * CI job timeout: the lifetime of the store token a job gets.
   * @default Duration.minutes(60)
   */
  readonly ciJobTimeout?: Duration;
  /**
   * Claims a job token must carry to log in as `registry-ci`.
   * @default the organisation's namespace and its subgroups (`namespace_path`)
   */
  readonly ciBoundClaims?: Readonly<Record<string, string | readonly string[]>>;
  /**
   * Where the agent files go and the paths inside the agent's container (env file, Role ID and
   * Secret ID files, refresh interval).
   * @default `cdktf.out/agents/<role>/`, rendering to `/secretstore/secrets/.env`
   */
  readonly agents?: Omit<AgentConfigurationsProps, 'applications'>;
}
