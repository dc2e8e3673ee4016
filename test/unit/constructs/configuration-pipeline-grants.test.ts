/**
 * The configuration pipeline's roles are granted what the stacks they run declare, derived from the
 * store object catalogue, not enumerated by construct type (issue 26): for every store object of
 * every stack in the pipeline file, read back from the synthesized output, and each rule its
 * catalogue entry asks for, the role's policy holds that path with at least those capabilities; the
 * plan role writes nothing. Checked on the platform, people, hash shards, the reader policy and a
 * user's raw provider resources in a stack.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { storeObjectKind } from '../../../lib/catalogue/store-object-catalogue';
import { PipelineAccess } from '../../../lib/catalogue/store-object-kind';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { Platform } from '../../../lib/platform/platform';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig } from '../../../stacks/platform.config';
import { withPeople } from '../../support/people-config';
import { policyRules, resources, synthesizePlatform } from '../../support/synthesized-platform';

const PIPELINE = { configurationProject: { projectId: '4242' } };
/** A policy and an auth method a user declares with the provider's own resources, in a stack of the platform. */
const userResources = (p: Platform) => {
  new Policy(p.appRoles, 'user-policy', { name: 'Team-Audit', policy: 'path "sys/audit" {\n  capabilities = ["read"]\n}\n' });
  new AuthBackend(p.ciAccess, 'user-userpass', { type: 'userpass', path: 'people-fallback' });
};

// Three elements each: jest passes its `done` callback in place of a missing last argument.
const CONFIGURATIONS: [string, PlatformConfig, ((p: Platform) => void) | undefined][] = [
  ['the platform', { ...platformConfig, ...PIPELINE }, undefined],
  ['people', { ...withPeople(), ...PIPELINE }, undefined],
  ['hash shards', { ...platformConfig, ...PIPELINE, applicationSharding: { by: 'hash', shards: 3 } }, undefined],
  ['the reader policy', { ...platformConfig, ...PIPELINE, readerPolicy: true }, undefined],
  ['a user\'s vault_policy and vault_auth_backend in the stacks', { ...platformConfig, ...PIPELINE }, userResources],
  ['everything at once', { ...withPeople(), ...PIPELINE, applicationSharding: { by: 'hash', shards: 2 }, readerPolicy: true }, userResources],
];

/** The synthesized output, the stacks its pipeline file runs and the two roles' rules by path. */
function synthesize(config: PlatformConfig, extend?: (p: Platform) => void) {
  const platform = synthesizePlatform(config, extend);
  const policy = (name: string) => {
    const text = resources(platform.stacks['ci-access'], 'vault_policy').find((p: any) => p.name === name).policy as string;
    // Capabilities sorted, to compare as sets.
    return new Map(policyRules(text).map(([p, caps]) => [p, [...caps].sort()]));
  };
  const jobs = yaml.load(fs.readFileSync(path.join(platform.outdir, 'ci', 'secretstore-iac.gitlab-ci.yml'), 'utf8')) as Record<string, unknown>;
  const piped = Object.keys(jobs).flatMap((j) => /^secretstore-iac-apply-(.+)$/.exec(j)?.[1] ?? []).filter((s) => s !== 'retired');
  return { platform, piped, roles: { apply: policy('secretstore-iac-pipeline'), plan: policy('secretstore-iac-plan') } as Record<PipelineAccess, Map<string, string[]>> };
}

describe('the configuration pipeline roles are granted what the stacks they run declare', () => {
  it.each(CONFIGURATIONS)('%s: every rule every declared object needs is in the role\'s policy, for both roles', (_name, config, extend) => {
    const { platform, piped, roles } = synthesize(config, extend);
    // The pipeline runs every synthesized stack.
    expect(piped.sort()).toEqual(Object.keys(platform.stacks).sort());
    const objects = readDeclaredObjects(platform.outdir);
    expect(new Set(objects.map((o) => o.stack))).toEqual(new Set(piped));
    const missing: string[] = [];
    for (const access of ['plan', 'apply'] as const) {
      for (const object of objects) {
        for (const rule of storeObjectKind(object.type)!.pipelineRules(object.fields, access)) {
          const granted = roles[access].get(rule.path) ?? [];
          const lacking = rule.capabilities.filter((c) => !granted.includes(c));
          if (lacking.length > 0) missing.push(`${access}: ${object.stack} ${object.address}: ${rule.path} lacks ${lacking.join(', ')}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it.each(CONFIGURATIONS)('%s: the plan role writes nothing (read only, but for the provider\'s child token)', (_name, config, extend) => {
    const { roles } = synthesize(config, extend);
    // read, and list on the listings that name objects (the takeover guard's lookup of an object about to be created).
    const writes = [...roles.plan].filter(([p, caps]) => p !== 'auth/token/create' && caps.some((c) => c !== 'read' && c !== 'list'));
    expect(writes).toEqual([]);
    // The child token: `update` on auth/token/create, which writes no declared object.
    expect(roles.plan.get('auth/token/create')).toEqual(['update']);
  });

  it('people: the apply role may enable the OIDC method (sudo), write its configuration, its group roles and their policies; the plan role reads them', () => {
    const { roles } = synthesize({ ...withPeople(), ...PIPELINE });
    expect(roles.apply.get('sys/auth/oidc')).toEqual(['create', 'delete', 'read', 'sudo', 'update']);
    expect(roles.apply.get('sys/mounts/auth/oidc/tune')).toEqual(['read', 'update']);
    for (const p of ['auth/oidc/config', 'auth/oidc/role/platform-admins', 'auth/oidc/role/developers', 'sys/policies/acl/platform-admins', 'sys/policies/acl/developers']) {
      expect({ p, caps: roles.apply.get(p) }).toEqual({ p, caps: ['create', 'delete', 'read', 'update'] });
      expect({ p, caps: roles.plan.get(p) }).toEqual({ p, caps: ['read'] });
    }
  });

  it('a user\'s raw provider resources: the policy under the name the store keeps (lower-cased), the auth method at its path', () => {
    const { roles } = synthesize({ ...platformConfig, ...PIPELINE }, userResources);
    expect(roles.apply.get('sys/policies/acl/team-audit')).toEqual(['create', 'delete', 'read', 'update']);
    expect(roles.apply.get('sys/auth/people-fallback')).toEqual(['create', 'delete', 'read', 'sudo', 'update']);
    expect(roles.plan.get('sys/policies/acl/team-audit')).toEqual(['read']);
    // Only what is declared: the user's policy grants sys/audit, the pipeline does not get it.
    expect(roles.apply.has('sys/audit')).toBe(false);
  });

  it('role-level rules beside the objects: the child token, the auth method list, the mount table (read)', () => {
    const { roles } = synthesize({ ...platformConfig, ...PIPELINE });
    for (const role of [roles.apply, roles.plan]) {
      expect(role.get('auth/token/create')).toEqual(['update']);
      expect(role.get('sys/auth')).toEqual(['read']);
      expect(role.get('sys/mounts')).toEqual(['read']);
    }
  });
});
