import * as fs from 'fs';
import * as path from 'path';
import { addBillingApplication } from '../../../examples/add-application';
import { addHelmAccount } from '../../../examples/add-registry-service-account';
import { configWithMirrorAccount } from '../../../examples/registry-account-in-config';
import { policyRules, resources, synthesizePlatform } from '../../support/synthesized-platform';
import { REPO_ROOT } from '../../support/paths';
import { withTestLocalState } from '../../support/platform-config';

const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const example = (file: string) => fs.readFileSync(path.join(REPO_ROOT, 'examples', file), 'utf8').trim();

describe('README examples are the compiled example files and do what the README says', () => {
  it.each(['add-registry-service-account.ts', 'registry-account-in-config.ts', 'add-application.ts'])('README quotes examples/%s verbatim', (file) => {
    expect(readme).toContain(example(file));
  });

  it('"add a service account": svc-helm becomes readable by registry-ci', () => {
    const p = synthesizePlatform(undefined, (platform) => {
      const account = addHelmAccount(platform.ciAccess);
      expect(account.secret.grants.map(String)).toEqual([
        'jwt/registry-ci: read on secret/data/registry/svc-helm (policy registry-ci)',
      ]);
    });
    const policy = resources(p.stacks['ci-access'], 'vault_policy').find((x) => x.name === 'registry-ci').policy;
    expect(policyRules(policy)).toContainEqual(['secret/data/registry/svc-helm', ['read']]);
  });

  it('"add a service account" in the configuration: svc-mirror becomes readable by registry-ci', () => {
    const p = synthesizePlatform(withTestLocalState(configWithMirrorAccount), (platform) => {
      expect(platform.ciAccess.accounts.mirror.secret.grants.map(String)).toEqual([
        'jwt/registry-ci: read on secret/data/registry/svc-mirror (policy registry-ci)',
      ]);
    });
    const policy = resources(p.stacks['ci-access'], 'vault_policy').find((x) => x.name === 'registry-ci').policy;
    expect(policyRules(policy)).toContainEqual(['secret/data/registry/svc-mirror', ['read']]);
  });

  it('"add an application": billing-dev reads its own paths only', () => {
    const p = synthesizePlatform(undefined, (platform) => {
      addBillingApplication(platform.appRoles);
    });
    const apps = p.stacks['app-roles'];
    const policy = resources(apps, 'vault_policy').find((x) => x.name === 'billing-dev').policy;
    expect(policyRules(policy)).toEqual([['secret/data/acme/dev/billing/*', ['read']]]);
    expect(resources(apps, 'vault_approle_auth_backend_role').map((r) => r.role_name)).toContain('billing-dev');
    // ...and its agent configuration follows from the same instantiation.
    const envTemplate = fs.readFileSync(path.join(p.outdir, 'agents', 'billing-dev', 'env.ctmpl'), 'utf8');
    expect(envTemplate).toContain('secret/data/acme/dev/billing/database');
    expect(envTemplate).toContain('secret/data/acme/dev/billing/smtp');
  });
});
