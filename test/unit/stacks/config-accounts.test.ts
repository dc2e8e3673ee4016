import * as fs from 'fs';
import { RegistryServiceAccount } from '../../../lib';
import { CiAccessStack } from '../../../lib/platform/ci-access-stack';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig } from '../../support/platform-config';
import { policyRules, resources, synthesisProblems, synthesizePlatform } from '../../support/synthesized-platform';

// README "Add a service account": a new key in the configuration's `accounts` map is one declaration.

const withAccounts = (accounts: PlatformConfig['accounts']): PlatformConfig => ({ ...platformConfig, accounts });
const registryCiRules = (stacks: Record<string, any>) =>
  policyRules(resources(stacks['ci-access'], 'vault_policy').find((p) => p.name === 'registry-ci').policy);

/** The problems a synthesis with `config` reports, as `[construct path] message`; [] when it succeeds. */
const problemsOf = (config: PlatformConfig): string[] => synthesisProblems(config);

describe('a registry account declared in the configuration', () => {
  it('gives the account, its secret path and the read grant to registry-ci', () => {
    const p = synthesizePlatform(
      withAccounts({ mirror: { permissions: ['rpm:read', 'raw:read'], usedBy: 'mirror sync jobs', consumers: ['mirror-sync'] } }),
      (platform) => {
        const mirror = platform.ciAccess.accounts.mirror;
        expect(mirror.accountName).toBe('svc-mirror');
        expect(mirror.node.path).toBe('ci-access/svc-mirror');
        expect(mirror.secret.grants.map(String)).toEqual(['jwt/registry-ci: read on secret/data/registry/svc-mirror (policy registry-ci)']);
        // The spec's three accounts are still there, before the configured one.
        expect(Object.keys(platform.ciAccess.accounts)).toEqual(['orchestrator', 'executor', 'deployer', 'mirror']);
      },
    );
    expect(registryCiRules(p.stacks)).toContainEqual(['secret/data/registry/svc-mirror', ['read']]);
    // ...and the CI template gets a job for its consumer.
    const template = fs.readFileSync(`${p.outdir}/ci/secretstore-ci.gitlab-ci.yml`, 'utf8');
    expect(template).toContain('.secretstore-mirror-sync:');
  });

  it('readByCi: false declares the account without granting registry-ci (a pull-only account, spec §2.3)', () => {
    const p = synthesizePlatform(
      withAccounts({ puller: { permissions: ['pypi:read'], usedBy: 'VM deployment scripts', readByCi: false } }),
      (platform) => expect(platform.ciAccess.accounts.puller.secret.grants).toEqual([]),
    );
    expect(registryCiRules(p.stacks).map(([path]) => path)).not.toContain('secret/data/registry/svc-puller');
  });

  it('is checked like any other account: the scope rule names it and the account it repeats', () => {
    expect(problemsOf(withAccounts({ mirror: { permissions: ['container-image:read'], usedBy: 'mirror sync jobs' } }))).toEqual([
      '[ci-access/svc-mirror] SSI-R3 permissions = ["container-image:read"]: same permission scope as svc-deployer (ci-access/svc-deployer): a new account is created only for a distinct scope',
    ]);
  });

  it('under a name the stack already declares is a problem reported with the others, not a second account', () => {
    expect(problemsOf(withAccounts({ deployer: { permissions: ['pypi:read'], usedBy: 'twice' }, mirror: { permissions: ['container-image:read'], usedBy: 'sync' } }))).toEqual([
      '[ci-access] accounts.deployer = "deployer": is declared by the stack already (ci-access/svc-deployer): choose another name',
      '[ci-access/svc-mirror] SSI-R3 permissions = ["container-image:read"]: same permission scope as svc-deployer (ci-access/svc-deployer): a new account is created only for a distinct scope',
    ]);
  });
});

describe('a registry account added to the ci-access stack\'s accounts map', () => {
  it('type-checks under any name (the map was once keyed by the three spec names only)', () => {
    synthesizePlatform(platformConfig, (platform) => {
      const ci = platform.ciAccess;
      // What a user writes inside the stack's `accounts = { ... }`; tsconfig.check.json compiles it.
      const accounts: CiAccessStack['accounts'] = {
        ...ci.accounts,
        mirror: new RegistryServiceAccount(ci, 'svc-mirror', { name: 'mirror', permissions: ['rpm:read'], usedBy: 'sync', readers: [ci.registryCi] }),
      };
      expect(accounts.mirror.secret.grants.map(String)).toEqual(['jwt/registry-ci: read on secret/data/registry/svc-mirror (policy registry-ci)']);
    });
  });
});
