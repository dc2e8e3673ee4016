import * as fs from 'fs';
import * as path from 'path';
import 'cdktf/lib/testing/adapters/jest'; // matcher types
import { Testing } from 'cdktf';
import { ApproleAuthBackendRole } from '@cdktf/provider-vault/lib/approle-auth-backend-role';
import { JwtAuthBackendRole } from '@cdktf/provider-vault/lib/jwt-auth-backend-role';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import {
  CiJwtAuth,
  CiJwtRole,
  CiSecret,
  JwtKeySource,
  PlatformSettings,
  postgresState,
  RegistryServiceAccount,
  SecretStoreStack,
} from '../../../lib';
import { definePlatform } from '../../../lib/platform/platform';
import { platformConfig } from '../../support/platform-config';
import { policyRules, readOutdir, resources, synthesizePlatform, tempOutdir } from '../../support/synthesized-platform';

// One describe per rule of ../shared/spec/credential-brokering.md, asserted on the synthesized JSON.

const CI_URL = platformConfig.settings.ciUrl;
const ORG = platformConfig.settings.organisation;
const platform = synthesizePlatform();
const ci = platform.stacks['ci-access'];
const apps = platform.stacks['app-roles'];
const policyOf = (stack: any, name: string): string => resources(stack, 'vault_policy').find((p) => p.name === name).policy;

describe('The platform is split into the ci-access and app-roles stacks', () => {
  it('synthesizes exactly these stacks, each asking for a vault provider 5.x from 5.6.0 (the bindings\' version) on', () => {
    expect(Object.keys(platform.stacks)).toEqual(['app-roles', 'ci-access']);
    for (const stack of Object.values(platform.stacks)) {
      expect(stack.terraform.required_providers.vault).toEqual({ source: 'hashicorp/vault', version: '>= 5.6.0, < 6.0.0' });
      expect(stack.provider.vault).toEqual([{}]); // address and token come from the environment at plan/apply
    }
  });

  it('keeps local state per stack by default, outside the output directory (next to cdktf.out)', () => {
    expect(ci.terraform.backend.local.path).toBe('../../../terraform.ci-access.tfstate');
    expect(apps.terraform.backend.local.path).toBe('../../../terraform.app-roles.tfstate');
  });

  it('postgresState() keeps each stack in its own schema and synthesizes no connection string', () => {
    const app = Testing.app();
    const p = definePlatform(app, platformConfig, postgresState());
    expect(JSON.parse(Testing.synth(p.ciAccess)).terraform.backend).toEqual({ pg: { schema_name: 'secretstore_iac_ci_access' } });
    expect(JSON.parse(Testing.synth(p.appRoles)).terraform.backend).toEqual({ pg: { schema_name: 'secretstore_iac_app_roles' } });
  });

  it('a re-synthesis keeps what the engine wrote into the stack directories (.terraform/, lock file)', () => {
    const outdir = tempOutdir();
    synthesizePlatform(platformConfig, undefined, outdir);
    const stackDir = path.join(outdir, 'stacks', 'ci-access');
    fs.mkdirSync(path.join(stackDir, '.terraform', 'providers'), { recursive: true });
    fs.writeFileSync(path.join(stackDir, '.terraform.lock.hcl'), '# lock\n');
    fs.writeFileSync(path.join(path.dirname(outdir), 'terraform.ci-access.tfstate'), '{}');
    synthesizePlatform(platformConfig, undefined, outdir);
    expect(fs.existsSync(path.join(stackDir, '.terraform', 'providers'))).toBe(true);
    expect(fs.readFileSync(path.join(stackDir, '.terraform.lock.hcl'), 'utf8')).toBe('# lock\n');
    expect(fs.readFileSync(path.join(path.dirname(outdir), 'terraform.ci-access.tfstate'), 'utf8')).toBe('{}');
  });

  it('a re-synthesis keeps a plan saved with -out and the import blocks of adopt in a stack directory, and rewrites what it generates', () => {
    const outdir = tempOutdir();
    synthesizePlatform(platformConfig, undefined, outdir);
    const stackDir = path.join(outdir, 'stacks', 'ci-access');
    const generated = fs.readFileSync(path.join(stackDir, 'cdk.tf.json'), 'utf8');
    fs.writeFileSync(path.join(stackDir, 'ci.tfplan'), 'saved plan');
    fs.writeFileSync(path.join(stackDir, 'adopt-imports.tf.json'), '{"import": []}');
    fs.writeFileSync(path.join(stackDir, 'cdk.tf.json'), '{"edited": true}');
    synthesizePlatform(platformConfig, undefined, outdir);
    expect(fs.readFileSync(path.join(stackDir, 'ci.tfplan'), 'utf8')).toBe('saved plan');
    expect(fs.readFileSync(path.join(stackDir, 'adopt-imports.tf.json'), 'utf8')).toBe('{"import": []}');
    expect(fs.readFileSync(path.join(stackDir, 'cdk.tf.json'), 'utf8')).toBe(generated);
  });
});

describe('§2.3: registry-ci reads exactly the six listed paths, read only', () => {
  it('its policy has exactly the six KV v2 paths with ["read"]', () => {
    expect(policyRules(policyOf(ci, 'registry-ci'))).toEqual([
      ['secret/data/codequality/svc-orchestrator', ['read']],
      ['secret/data/orchestrator/e2e-test-user', ['read']],
      ['secret/data/registry/svc-executor', ['read']],
      ['secret/data/registry/svc-orchestrator', ['read']],
      ['secret/data/testreport/svc-orchestrator', ['read']],
      ['secret/data/vulnmgmt/svc-orchestrator', ['read']],
    ]);
  });

  it('does not reach svc-deployer nor any application path', () => {
    const text = policyOf(ci, 'registry-ci');
    expect(text).not.toContain('svc-deployer');
    expect(text).not.toContain(`secret/data/${ORG}/`);
  });
});

describe('§5.1 and §2.4a: the JWT role registry-ci is bound to the CI issuer, audience and namespace', () => {
  const backend = resources(ci, 'vault_jwt_auth_backend')[0];
  const role = resources(ci, 'vault_jwt_auth_backend_role').find((r: any) => r.role_name === 'registry-ci');

  it('the JWT method trusts the CI URL as issuer, keys by OIDC discovery by default', () => {
    expect(backend).toMatchObject({ type: 'jwt', path: 'jwt', bound_issuer: CI_URL, oidc_discovery_url: CI_URL });
  });

  it('the role is a jwt role named registry-ci with aud = CI URL', () => {
    expect(role).toMatchObject({ role_name: 'registry-ci', role_type: 'jwt', bound_audiences: [CI_URL] });
    expect(role.backend).toMatch(/^\$\{vault_jwt_auth_backend\.[^.]+\.path\}$/);
  });

  it('bound claims are never empty: by default the organisation namespace and its subgroups', () => {
    expect(role.bound_claims).toEqual({ namespace_path: `${ORG},${ORG}/*` });
    expect(role.bound_claims_type).toBe('glob');
  });

  it('token policies are the registry-ci policy only', () => {
    expect(role.token_policies).toHaveLength(1);
    expect(role.token_policies[0]).toMatch(/^\$\{vault_policy\.registry-ci_policy_[A-F0-9]+\.name\}$/);
  });

  it('sets every role field explicitly (a role write is a partial update)', () => {
    for (const field of [
      'bound_subject',
      'claim_mappings',
      'groups_claim',
      'token_bound_cidrs',
      'token_num_uses',
      'token_period',
      'token_no_default_policy',
      'token_type',
      'user_claim',
      'clock_skew_leeway',
      'expiration_leeway',
      'not_before_leeway',
    ]) {
      expect(role).toHaveProperty(field);
    }
  });
});

describe('§8: the JWT-derived store token cannot outlive the job', () => {
  it('TTL, max TTL and explicit max TTL all equal the job timeout (60 min by default)', () => {
    const role = resources(ci, 'vault_jwt_auth_backend_role').find((r: any) => r.role_name === 'registry-ci');
    expect(role).toMatchObject({ token_ttl: 3600, token_max_ttl: 3600, token_explicit_max_ttl: 3600, token_period: 0 });
  });
});

describe('§2.1 and §2.2: registry service accounts', () => {
  it('declares svc-orchestrator, svc-executor and svc-deployer at secret/registry/svc-{name}', () => {
    let accounts: RegistryServiceAccount[] = [];
    synthesizePlatform(platformConfig, (p) => {
      accounts = Object.values(p.ciAccess.accounts);
    });
    expect(accounts.map((a) => [a.accountName, a.secret.path.logical, a.secret.keys, a.loginTarget])).toEqual([
      ['svc-orchestrator', 'registry/svc-orchestrator', ['password', 'username'], 'registry.acme.example:8443'],
      ['svc-executor', 'registry/svc-executor', ['password', 'username'], undefined],
      ['svc-deployer', 'registry/svc-deployer', ['password', 'username'], 'registry.acme.example:8444'],
    ]);
  });

  it('each account has a distinct permission scope; the executor cannot push images; the deployer only pulls', () => {
    synthesizePlatform(platformConfig, (p) => {
      const { orchestrator, executor, deployer } = p.ciAccess.accounts;
      expect(new Set([orchestrator, executor, deployer].map((a) => a.scope.key)).size).toBe(3);
      expect(executor.scope.has('container-image:write')).toBe(false);
      expect(deployer.scope.permissions).toEqual(['container-image:read']);
    });
  });
});

describe('§2.4: one AppRole role and policy per application, scoped to its own paths', () => {
  const roles = resources(apps, 'vault_approle_auth_backend_role');
  const expected: [string, string][] = [
    ['orchestrator-dev', `secret/data/${ORG}/dev/orchestrator/*`],
    ['authentik-role', `secret/data/${ORG}/shared/identity/*`],
    ['gitlab-role', `secret/data/${ORG}/shared/sourcehost/*`],
    ['registry', `secret/data/${ORG}/shared/registry/*`],
  ];

  it.each(expected)('%s reads %s and nothing else', (roleName, readable) => {
    expect(policyRules(policyOf(apps, roleName))).toEqual([[readable, ['read']]]);
  });

  it.each(expected.map(([r]) => r))('%s: token_ttl 12h, token_max_ttl 24h, secret_id_ttl 0, own policy only', (roleName) => {
    const role = roles.find((r) => r.role_name === roleName);
    expect(role).toMatchObject({ token_ttl: 43200, token_max_ttl: 86400, secret_id_ttl: 0, bind_secret_id: true });
    expect(role.token_policies).toHaveLength(1);
    const policyId = role.token_policies[0].match(/^\$\{vault_policy\.([^.]+)\.name\}$/)[1];
    expect(apps.resource.vault_policy[policyId].name).toBe(roleName);
  });

  it('the Role ID of each application is a (non-sensitive) output', () => {
    const outputs = Object.values(apps.output) as any[];
    expect(outputs).toHaveLength(4);
    outputs.forEach((o) => {
      expect(o.value).toMatch(/^\$\{vault_approle_auth_backend_role\.[^.]+\.role_id\}$/);
      expect(o.sensitive).toBeUndefined();
    });
  });
});

describe('§2.4 and §5.2: no secret value in any output', () => {
  const all = Object.values(platform.raw).join('\n');

  it('no Secret ID, KV secret value or token resource is declared', () => {
    for (const type of [
      'vault_approle_auth_backend_role_secret_id',
      'vault_approle_auth_backend_login',
      'vault_kv_secret_v2',
      'vault_kv_secret',
      'vault_generic_secret',
      'vault_token',
    ]) {
      expect(all).not.toContain(`"${type}"`);
    }
  });

  it('the provider block carries neither address nor token', () => {
    expect(all).not.toMatch(/"token"\s*:/);
    expect(all).not.toMatch(/"address"\s*:/);
  });
});

describe('Deterministic output', () => {
  it('two syntheses of the same input are byte-identical: every file, with its mode', () => {
    const again = synthesizePlatform();
    const files = (dir: string): Record<string, string> =>
      Object.fromEntries(
        (fs.readdirSync(dir, { recursive: true }) as string[])
          .sort()
          .filter((f) => fs.statSync(path.join(dir, f)).isFile())
          .map((f) => [f, `${(fs.statSync(path.join(dir, f)).mode & 0o777).toString(8)} ${fs.readFileSync(path.join(dir, f), 'utf8')}`]),
      );
    const first = files(platform.outdir);
    expect(Object.keys(first)).toEqual(expect.arrayContaining(['manifest.json', 'ci/secretstore-ci.gitlab-ci.yml']));
    expect(files(again.outdir)).toEqual(first);
  });

  it('no placeholder of the spec survives into the output', () => {
    expect(Object.values(platform.raw).join('\n')).not.toMatch(/\{(org|ci_url|registry_host|base_url|secrets_url)\}/);
  });
});

describe('Static PEM keys for the JWT method (tests, air-gapped stores)', () => {
  it('renders jwt_validation_pubkeys and no discovery URL', () => {
    const pem = '-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----\n';
    const p = synthesizePlatform({ ...platformConfig, ciKeySource: JwtKeySource.publicKeys([pem]) });
    const backend = resources(p.stacks['ci-access'], 'vault_jwt_auth_backend')[0];
    expect(backend.jwt_validation_pubkeys).toEqual([pem.trim()]); // the store keeps keys trimmed
    expect(backend.oidc_discovery_url).toBeUndefined();
  });
});

describe('Adding a service account is one construct instantiation', () => {
  it('one RegistryServiceAccount with readers adds its path to registry-ci and nothing else changes', () => {
    const extended = synthesizePlatform(platformConfig, (p) => {
      new RegistryServiceAccount(p.ciAccess, 'svc-helm', {
        name: 'helm',
        permissions: ['raw:read'],
        usedBy: 'chart publishing',
        consumers: ['chart-publish'],
        readers: [p.ciAccess.registryCi],
      });
    });
    const before = policyRules(policyOf(ci, 'registry-ci'));
    const after = policyRules(policyOf(extended.stacks['ci-access'], 'registry-ci'));
    expect(after.filter((r) => !before.some((b) => b[0] === r[0]))).toEqual([['secret/data/registry/svc-helm', ['read']]]);
    expect(extended.raw['app-roles']).toBe(platform.raw['app-roles']);
  });
});

describe('cdktf Testing matchers on a stack of its own', () => {
  it('renders registry-ci and its policy with the documented properties', () => {
    const app = Testing.app();
    const stack = new SecretStoreStack(app, 'ci', { settings: new PlatformSettings(platformConfig.settings) });
    const auth = new CiJwtAuth(stack, 'jwt');
    const role = new CiJwtRole(stack, 'registry-ci', { auth });
    new CiSecret(stack, 'vulnmgmt', {
      path: 'vulnmgmt/svc-orchestrator',
      keys: ['token'],
      consumers: ['vulnerability-import'],
      description: 'import token',
      readers: [role],
    });
    const synthesized = Testing.synth(stack);
    expect(synthesized).toHaveResourceWithProperties(JwtAuthBackendRole, {
      role_name: 'registry-ci',
      role_type: 'jwt',
      bound_audiences: [CI_URL],
      token_explicit_max_ttl: 3600,
    });
    expect(synthesized).toHaveResourceWithProperties(Policy, { name: 'registry-ci' });
    expect(synthesized).not.toHaveResource(ApproleAuthBackendRole);
  });
});

describe('Snapshots (one per stack)', () => {
  it.each(['ci-access', 'app-roles'])('%s', (name) => {
    expect(platform.stacks[name]).toMatchSnapshot();
  });
});

describe('A failed synthesis leaves the previous output untouched', () => {
  it('keeps the earlier cdktf.out when validation fails', () => {
    const outdir = tempOutdir();
    synthesizePlatform(platformConfig, undefined, outdir);
    const before = readOutdir(outdir).raw;
    expect(() =>
      synthesizePlatform({ ...platformConfig, settings: { ...platformConfig.settings, organisation: '' } }, undefined, outdir),
    ).toThrow(/nothing was written/);
    expect(readOutdir(outdir).raw).toEqual(before);
    expect(fs.readdirSync(path.dirname(outdir))).toEqual(['cdktf.out']);
  });
});
