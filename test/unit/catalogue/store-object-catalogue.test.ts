import { App, TerraformStack } from 'cdktf';
import { Construct } from 'constructs';
import { GenericSecret } from '@cdktf/provider-vault/lib/generic-secret';
import { VaultProvider } from '@cdktf/provider-vault/lib/provider';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { ApproleAuthBackendRole } from '@cdktf/provider-vault/lib/approle-auth-backend-role';
import { SecretStoreApp } from '../../../lib';
import { CATALOGUED_RESOURCE_TYPES, STORE_OBJECT_CATALOGUE, storeObjectKind } from '../../../lib/catalogue/store-object-catalogue';
import { declaredStoreObjects } from '../../../lib/constructs/declared-store-objects';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { addBillingApplication } from '../../../examples/add-application';
import { addHelmAccount } from '../../../examples/add-registry-service-account';
import { configWithMirrorAccount } from '../../../examples/registry-account-in-config';
import { definePlatform, Platform } from '../../../lib/platform/platform';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig, TEST_LOCAL_STATE_REASON, withTestLocalState } from '../../support/platform-config';
import { withPeople } from '../../support/people-config';
import { tempOutdir } from '../../support/synthesized-platform';

/** Every configuration the project ships or documents: the platform, the examples, people, shards, the pipeline roles, the reader policy. */
// Three elements each: jest passes its `done` callback in place of a missing last argument.
const CONFIGURATIONS: [string, PlatformConfig, ((p: Platform) => void) | undefined][] = [
  ['the platform', platformConfig, undefined],
  ['people', withPeople(), undefined],
  ['hash shards', { ...platformConfig, applicationSharding: { by: 'hash', shards: 3 } }, undefined],
  ['environment shards', { ...platformConfig, applicationSharding: { by: 'environment' } }, undefined],
  ['the configuration pipeline roles', { ...platformConfig, configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } }, undefined],
  ['the reader policy', { ...platformConfig, readerPolicy: true }, undefined],
  ['example: account in the config', withTestLocalState(configWithMirrorAccount), undefined],
  ['example: account construct', platformConfig, (p) => void addHelmAccount(p.ciAccess)],
  ['example: application construct', platformConfig, (p) => void addBillingApplication(p.appRoles)],
  [
    'everything at once',
    { ...withPeople(), applicationSharding: { by: 'hash', shards: 2 }, configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON }, readerPolicy: true },
    (p) => void addBillingApplication(p.appRoles),
  ],
];

/** Synthesizes a configuration and returns the app (for the construct-time view) and the output directory. */
function synthesize(config: PlatformConfig, extend?: (p: Platform) => void): { app: SecretStoreApp; outdir: string } {
  const outdir = tempOutdir();
  const app = new SecretStoreApp({ outdir });
  const platform = definePlatform(app, config);
  extend?.(platform);
  app.synth();
  return { app, outdir };
}

describe('one catalogue entry per kind of store object, keyed by the provider resource type', () => {
  it('each entry is filed under its own resource type, sorted', () => {
    for (const [type, kind] of STORE_OBJECT_CATALOGUE) expect(kind.resourceType).toBe(type);
    expect([...CATALOGUED_RESOURCE_TYPES]).toEqual([...CATALOGUED_RESOURCE_TYPES].sort());
  });

  it.each(CONFIGURATIONS)('%s: every store resource type it synthesizes has an entry', (_name, config, extend) => {
    const { outdir } = synthesize(config, extend);
    const types = new Set<string>();
    for (const stack of require('fs').readdirSync(`${outdir}/stacks`)) {
      const file = `${outdir}/stacks/${stack}/cdk.tf.json`;
      if (!require('fs').existsSync(file)) continue;
      const json = JSON.parse(require('fs').readFileSync(file, 'utf8'));
      for (const type of Object.keys(json.resource ?? {})) types.add(type);
    }
    expect(types.size).toBeGreaterThan(2);
    expect([...types].filter((t) => storeObjectKind(t) === undefined)).toEqual([]);
  });

  it.each(CONFIGURATIONS)('%s: the objects located at synthesis are the ones the output declares', (_name, config, extend) => {
    const { app, outdir } = synthesize(config, extend);
    const atSynthesis = declaredStoreObjects(app).objects.map((o) => `${o.stack} ${o.address} ${o.location.storePath} ${o.location.importId}`).sort();
    const onDisk = readDeclaredObjects(outdir).map((o) => `${o.stack} ${o.address} ${o.storePath} ${o.importId}`).sort();
    expect(atSynthesis.length).toBeGreaterThan(5);
    expect(atSynthesis).toEqual(onDisk);
  });
});

describe('a store resource the catalogue does not know is found', () => {
  it('a raw vault_generic_secret added by hand is listed as uncatalogued, a raw vault_policy is located', () => {
    const app = new App({ outdir: tempOutdir() });
    const stack = new TerraformStack(app, 'extra');
    new VaultProvider(stack, 'vault', {});
    new GenericSecret(stack, 'secret', { path: 'secret/x', dataJson: '{}' });
    new Policy(stack, 'policy', { name: ' Team-A ', policy: 'path "x" { capabilities = ["read"] }' });
    const found = declaredStoreObjects(app as unknown as Construct);
    expect(found.uncatalogued).toEqual([{ constructPath: 'extra/secret', resourceType: 'vault_generic_secret' }]);
    expect(found.objects.map((o) => [o.constructPath, o.location.storePath, o.name.space, o.name.key])).toEqual([['extra/policy', 'sys/policies/acl/team-a', 'policy', 'team-a']]);
  });

  it("a role's mount is found through the reference to its mount's path, not assumed from the type", () => {
    const app = new App({ outdir: tempOutdir() });
    const stack = new TerraformStack(app, 'extra');
    new VaultProvider(stack, 'vault', {});
    const mount = new AuthBackend(stack, 'mount', { type: 'approle', path: 'apps' });
    new ApproleAuthBackendRole(stack, 'role', { backend: mount.path, roleName: 'Worker' });
    const found = declaredStoreObjects(app as unknown as Construct).objects.map((o) => [o.location.storePath, o.name.space, o.name.key]);
    expect(found).toEqual([
      ['sys/auth/apps', 'auth mount', 'apps'],
      ['auth/apps/role/Worker', 'role of auth/apps', 'worker'],
    ]);
  });
});

describe('names are compared as the store compares them', () => {
  const policy = storeObjectKind('vault_policy')!;
  const approle = storeObjectKind('vault_approle_auth_backend_role')!;
  const jwtRole = storeObjectKind('vault_jwt_auth_backend_role')!;
  it('policy names: trimmed and lower-cased, one space for every stack', () => {
    expect(policy.name({ name: ' Registry-CI\t' })).toEqual({ space: 'policy', key: 'registry-ci' });
  });
  it('AppRole role names: lower-cased, within their mount', () => {
    expect(approle.name({ backend: 'approle', role_name: 'Billing-Dev' })).toEqual({ space: 'role of auth/approle', key: 'billing-dev' });
  });
  it('JWT role names: lower-cased, within their mount (both stores, test/store/store-names.store.test.ts)', () => {
    expect(jwtRole.name({ backend: '/oidc/', role_name: 'Admins' })).toEqual({ space: 'role of auth/oidc', key: 'admins' });
  });
  it('the pipeline may plan (read) or apply (change) an object, never more', () => {
    expect(approle.pipelineRules({ backend: 'approle', role_name: 'billing-dev' }, 'plan')).toEqual([
      { path: 'auth/approle/role/billing-dev', capabilities: ['read'] },
      { path: 'auth/approle/role/billing-dev/role-id', capabilities: ['read'] },
      { path: 'auth/approle/role', capabilities: ['list'] },
      { path: 'auth/approle/role/', capabilities: ['list'] },
    ]);
    // The provider's requests use the name as given (ACL paths are case-sensitive), the library's reads the stored name.
    expect(policy.pipelineRules({ name: 'Billing-Dev' }, 'apply')).toEqual([
      { path: 'sys/policies/acl/Billing-Dev', capabilities: ['create', 'read', 'update', 'delete'] },
      { path: 'sys/policies/acl/billing-dev', capabilities: ['create', 'read', 'update', 'delete'] },
      { path: 'sys/policies/acl', capabilities: ['list'] },
      { path: 'sys/policies/acl/', capabilities: ['list'] },
    ]);
  });
});

describe('attributes the provider derives from configured ones are known to the catalogue (the offline reference resolver reads them)', () => {
  it("a policy's id is its name; a mount's id and path are its path, else its type (vault_auth_backend) or jwt (vault_jwt_auth_backend)", () => {
    expect(storeObjectKind('vault_policy')!.derivedAttribute({ name: 'Team-A' }, 'id')).toBe('Team-A');
    expect(storeObjectKind('vault_auth_backend')!.derivedAttribute({ type: 'approle' }, 'path')).toBe('approle');
    expect(storeObjectKind('vault_auth_backend')!.derivedAttribute({ type: 'approle', path: 'apps' }, 'id')).toBe('apps');
    expect(storeObjectKind('vault_jwt_auth_backend')!.derivedAttribute({ type: 'oidc' }, 'path')).toBe('jwt');
    expect(storeObjectKind('vault_jwt_auth_backend_role')!.derivedAttribute({ role_name: 'x' }, 'id')).toBeUndefined();
  });

  it('a reference to a mount without a path resolves to its default path, at synthesis and in the synthesized output', () => {
    const app = new App({ outdir: tempOutdir() });
    const stack = new TerraformStack(app, 'extra');
    new VaultProvider(stack, 'vault', {});
    const mount = new AuthBackend(stack, 'mount', { type: 'approle' });
    new ApproleAuthBackendRole(stack, 'role', { backend: mount.path, roleName: 'worker' });
    const found = declaredStoreObjects(app as unknown as Construct).objects.map((o) => o.location.storePath);
    expect(found).toEqual(['sys/auth/approle', 'auth/approle/role/worker']);
  });
});
