import { Construct } from 'constructs';
import { PlatformDeclarations, PlatformRule, SecretStoreApp } from '../../lib';
import { definePlatform, Platform } from '../../stacks/platform';
import { platformConfig } from '../../stacks/platform.config';
import { tempOutdir } from './synthesized-platform';

/**
 * The findings of one platform rule on the repository's platform, after `change`, as
 * `[constructPath] problem` lines. Nothing is synthesized: the rule sees the construct tree only.
 */
export function findingsOf(rule: PlatformRule, change: (p: Platform, app: Construct) => void = () => undefined): string[] {
  const app = new SecretStoreApp({ outdir: tempOutdir() });
  change(definePlatform(app, platformConfig), app);
  return rule.check(new PlatformDeclarations(app)).map((f) => `[${f.constructPath}] ${f.problem}`);
}
