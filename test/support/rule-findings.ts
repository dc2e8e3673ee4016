import { Construct } from 'constructs';
import { CiSecret, PlatformDeclarations, PlatformRule, SecretStoreApp } from '../../lib';
import { definePlatform, Platform } from '../../lib/platform/platform';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { platformConfig } from './platform-config';
import { tempOutdir } from './synthesized-platform';

/**
 * The findings of one platform rule on the repository's platform (or `config`'s), after `change`, as
 * `[constructPath] problem` lines. Nothing is synthesized: the rule sees the construct tree only.
 */
export function findingsOf(
  rule: PlatformRule,
  change: (p: Platform, app: Construct) => void = () => undefined,
  config: PlatformConfig = platformConfig,
): string[] {
  const app = new SecretStoreApp({ outdir: tempOutdir() });
  change(definePlatform(app, config), app);
  return rule.check(new PlatformDeclarations(app)).map((f) => `[${f.constructPath}] ${f.problem}`);
}

/** A CI secret at `path` (construct id `x`) read by registry-ci: valid on its own, so only the rules speak. */
export const ciSecretAt = (p: Platform, path: string): CiSecret =>
  new CiSecret(p.ciAccess, 'x', { path, keys: ['token'], consumers: ['scan'], description: 'scan', readers: [p.ciAccess.registryCi] });
