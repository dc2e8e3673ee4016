/**
 * The configuration pipeline's roles are granted what the stacks they run declare, derived from the
 * store object catalogue, not enumerated by construct type (issue 26), and the grants live with each
 * stack (issue 30): for every store object of every stack in the pipeline file, read back from the
 * synthesized output, and each rule its catalogue entry asks for, the union of the role's own policy
 * (in ci-access) and the role's grant in the object's stack (attached to the role by name) holds that
 * path with at least those capabilities; the plan role writes nothing. Checked on the platform,
 * people, hash shards, the reader policy and a user's raw provider resources in a stack. ci-access
 * does not grow with the number of applications, and adding one changes only its shard stack.
 */
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { readPipelineDescription } from '../../../lib/pipeline/pipeline-description';
import { stackTokenChoice } from '../../../lib/pipeline/stack-token';
import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { storeObjectKind } from '../../../lib/catalogue/store-object-catalogue';
import { PipelineAccess } from '../../../lib/catalogue/store-object-kind';
import { runCli } from '../../../lib/cli/run-cli';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { Platform } from '../../../lib/platform/platform';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { withPeople } from '../../support/people-config';
import { policyRules, resources, synthesizePlatform } from '../../support/synthesized-platform';

const PIPELINE = { configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } };
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

const ROLE_NAMES: Record<PipelineAccess, string> = { apply: 'secretstore-iac-pipeline', plan: 'secretstore-iac-plan' };
type Rules = Map<string, string[]>;

/** A rendered policy's rules by path, capabilities sorted (to compare as sets). */
const rulesOf = (text: string): Rules => new Map(policyRules(text).map(([p, caps]) => [p, [...caps].sort()]));

/**
 * The synthesized output, the stacks its pipeline file runs, and for each role its own policy's
 * rules, its `token_policies` and its grant in each stack (the policy of that name the stack declares).
 */
function synthesize(config: PlatformConfig, extend?: (p: Platform) => void) {
  const platform = synthesizePlatform(config, extend);
  const role = (access: PipelineAccess) => {
    const name = ROLE_NAMES[access];
    const own = rulesOf(resources(platform.stacks['ci-access'], 'vault_policy').find((p: any) => p.name === name).policy);
    const tokenPolicies = resources(platform.stacks['ci-access'], 'vault_jwt_auth_backend_role').find((r: any) => r.role_name === name).token_policies as string[];
    const grants = new Map<string, Rules>();
    for (const [stack, json] of Object.entries(platform.stacks)) {
      const grant = resources(json, 'vault_policy').find((p: any) => p.name === `${name}-${stack}`);
      if (grant && tokenPolicies.includes(grant.name)) grants.set(stack, rulesOf(grant.policy));
    }
    return { own, tokenPolicies, grants };
  };
  const jobs = yaml.load(fs.readFileSync(path.join(platform.outdir, 'ci', 'secretstore-iac.gitlab-ci.yml'), 'utf8')) as Record<string, unknown>;
  // A stack's own apply job (`--stack S`), or the stacks the apply jobs of a shard job group share
  // (`--group G`: the group's stacks, from the description synthesized beside the pipeline file).
  const description = readPipelineDescription(platform.outdir);
  const piped = [
    ...new Set(
      Object.entries(jobs).flatMap(([j, job]) => {
        if (!/^secretstore-iac-apply-/.test(j)) return [];
        const command = (job as { script: string[] }).script.join('\n');
        const stack = / --stack (\S+)/.exec(command)?.[1];
        const group = / --group (\S+)/.exec(command)?.[1];
        return stack !== undefined ? [stack] : description.shardGroups.find((g) => g.name === group)?.stacks ?? [];
      }),
    ),
  ];
  const detail = { apply: role('apply'), plan: role('plan') };
  // What the role may do for an object of a stack: its own policy and its grant there, united.
  const granted = (access: PipelineAccess, stack: string): Rules => {
    const union: Rules = new Map(detail[access].own);
    for (const [p, caps] of detail[access].grants.get(stack) ?? []) union.set(p, [...new Set([...(union.get(p) ?? []), ...caps])].sort());
    return union;
  };
  // Every rule the role holds anywhere (its own policy and every grant attached to it).
  const all = (access: PipelineAccess): Rules => {
    const union: Rules = new Map(detail[access].own);
    for (const grant of detail[access].grants.values()) for (const [p, caps] of grant) union.set(p, [...new Set([...(union.get(p) ?? []), ...caps])].sort());
    return union;
  };
  return { platform, piped, detail, granted, roles: { apply: all('apply'), plan: all('plan') } as Record<PipelineAccess, Rules> };
}

describe('the configuration pipeline roles are granted what the stacks they run declare', () => {
  it.each(CONFIGURATIONS)('%s: every rule every declared object needs is in the role\'s policy or its grant in the object\'s stack, for both roles', (_name, config, extend) => {
    const { platform, piped, granted, detail } = synthesize(config, extend);
    // The pipeline runs every synthesized stack.
    expect(piped.sort()).toEqual(Object.keys(platform.stacks).sort());
    const objects = readDeclaredObjects(platform.outdir);
    expect(new Set(objects.map((o) => o.stack))).toEqual(new Set(piped));
    const missing: string[] = [];
    for (const access of ['plan', 'apply'] as const) {
      for (const object of objects) {
        const rules = granted(access, object.stack);
        for (const rule of storeObjectKind(object.type)!.pipelineRules(object.fields, access)) {
          const lacking = rule.capabilities.filter((c) => !(rules.get(rule.path) ?? []).includes(c));
          if (lacking.length > 0) missing.push(`${access}: ${object.stack} ${object.address}: ${rule.path} lacks ${lacking.join(', ')}`);
        }
      }
    }
    expect(missing).toEqual([]);
    // Every stack but the roles' own has its grant, attached to the role by name, after the role's own policy.
    for (const access of ['plan', 'apply'] as const) {
      const others = piped.filter((s) => s !== 'ci-access').sort();
      expect([...detail[access].grants.keys()].sort()).toEqual(others);
      expect(detail[access].tokenPolicies).toEqual([expect.stringMatching(/^\$\{vault_policy\.pipeline-[a-z]+_policy_[A-F0-9]+\.name\}$/), ...others.map((s) => `${ROLE_NAMES[access]}-${s}`)]);
    }
  });

  it('each stack\'s engine run carries the role\'s own policy, default and the role\'s grant there: the names the description gives are those the roles attach', () => {
    const { platform, detail } = synthesize(CONFIGURATIONS[5][1], CONFIGURATIONS[5][2]);
    const description = readPipelineDescription(platform.outdir);
    for (const access of ['plan', 'apply'] as const) {
      expect(description.roles[access]).toBe(ROLE_NAMES[access]);
      // What a job token of the role carries (the role's tokens carry default: token_no_default_policy is false).
      const carried = ['default', ROLE_NAMES[access], ...detail[access].tokenPolicies.slice(1)];
      for (const stack of description.stacks) {
        const grant = detail[access].grants.has(stack) ? [`${ROLE_NAMES[access]}-${stack}`] : [];
        expect({ stack, policies: stackTokenChoice(stack, carried, description, description.stacks).policies }).toEqual({ stack, policies: ['default', ROLE_NAMES[access], ...grant] });
      }
    }
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

  it('role-level rules in the role\'s own policy: the child token, the auth method list, the mount table (read)', () => {
    const { detail } = synthesize({ ...platformConfig, ...PIPELINE });
    for (const role of [detail.apply.own, detail.plan.own]) {
      expect(role.get('auth/token/create')).toEqual(['update']);
      expect(role.get('sys/auth')).toEqual(['read']);
      expect(role.get('sys/mounts')).toEqual(['read']);
    }
  });
});

describe('the grants live with each stack (issue 30)', () => {
  it('people: the objects\' own paths are in the people stack\'s grants, the listings and the grants\' own paths in the roles\' policies', () => {
    const { detail } = synthesize({ ...withPeople(), ...PIPELINE });
    const people = { apply: detail.apply.grants.get('people')!, plan: detail.plan.grants.get('people')! };
    expect(people.apply.get('auth/oidc/role/developers')).toEqual(['create', 'delete', 'read', 'update']);
    expect(people.apply.get('sys/auth/oidc')).toEqual(['create', 'delete', 'read', 'sudo', 'update']);
    expect(people.plan.get('sys/policies/acl/developers')).toEqual(['read']);
    expect(detail.apply.own.has('auth/oidc/role/developers')).toBe(false);
    expect(detail.apply.own.has('sys/policies/acl/developers')).toBe(false);
    // Listings: names only, one per listing, in the role's own policy (a plan of a new object finds out whether the store has it).
    expect(detail.apply.own.get('auth/oidc/role')).toEqual(['list']);
    expect(detail.plan.own.get('sys/policies/acl/')).toEqual(['list']);
    expect(people.apply.has('auth/oidc/role')).toBe(false);
    // The grants themselves: the apply role writes both roles' grants of each stack (its apply holds them), the plan role reads them.
    for (const grant of ['secretstore-iac-pipeline-people', 'secretstore-iac-plan-people']) {
      expect(detail.apply.own.get(`sys/policies/acl/${grant}`)).toEqual(['create', 'delete', 'read', 'update']);
      expect(detail.plan.own.get(`sys/policies/acl/${grant}`)).toEqual(['read']);
    }
    // ci-access's own objects stay in the roles' policies (no grant in the roles' own stack).
    expect(detail.apply.own.get('auth/jwt/role/registry-ci')).toEqual(['create', 'delete', 'read', 'update']);
    expect(detail.apply.grants.has('ci-access')).toBe(false);
  });

  it('every store resource of a stack but the grants depends on the apply role\'s grant there, a user\'s own resources too', () => {
    const { platform } = synthesize({ ...withPeople(), ...PIPELINE, applicationSharding: { by: 'hash', shards: 2 } }, userResources);
    const lacking: string[] = [];
    let checked = 0;
    for (const [stack, json] of Object.entries(platform.stacks).filter(([s]) => s !== 'ci-access')) {
      for (const [type, blocks] of Object.entries(json.resource as Record<string, Record<string, any>>)) {
        for (const [id, block] of Object.entries(blocks)) {
          if (id.startsWith('secretstore-iac-grant-')) {
            expect({ id, depends_on: block.depends_on }).toEqual({ id, depends_on: undefined });
            continue;
          }
          checked++;
          if (!(block.depends_on ?? []).includes('vault_policy.secretstore-iac-grant-pipeline-apply')) lacking.push(`${stack} ${type}.${id}`);
        }
      }
    }
    expect(lacking).toEqual([]);
    expect(checked).toBeGreaterThan(10);
    expect(resources(platform.stacks['app-roles'], 'vault_policy').find((p: any) => p.name === 'Team-Audit').depends_on).toEqual(['vault_policy.secretstore-iac-grant-pipeline-apply']);
    // ci-access waits for nothing new.
    expect(JSON.stringify(platform.stacks['ci-access'])).not.toContain('secretstore-iac-grant-');
  });

  it('who-can attributes an application\'s role to the apply role through its grant (token_policies), and only reading it to the plan role', async () => {
    const { platform } = synthesize({ ...platformConfig, ...PIPELINE, applicationSharding: { by: 'hash', shards: 2 } });
    const whoCan = async (capability: string) => {
      const out: string[] = [];
      const code = await runCli(['who-can', capability, 'auth/approle/role/orchestrator-dev', platform.outdir], { env: {}, cwd: platform.outdir, isTerminal: false, stdout: (l) => out.push(l), stderr: () => undefined });
      expect(code).toBe(0);
      return out.join('\n');
    };
    const shard = Object.keys(platform.stacks).find((s) => platform.raw[s].includes('"auth/approle/role/orchestrator-dev') && s !== 'ci-access')!;
    const deletes = await whoCan('delete');
    expect(deletes).toContain('jwt/secretstore-iac-pipeline');
    expect(deletes).toContain(`secretstore-iac-pipeline-${shard}`);
    expect(deletes).not.toContain('jwt/secretstore-iac-plan');
    const reads = await whoCan('read');
    expect(reads).toContain('jwt/secretstore-iac-plan');
    expect(reads).toContain(`secretstore-iac-plan-${shard}`);
  });

  /** `count` applications (`app-0-dev`, ...), hash-sharded into four stacks. */
  const manyApplications = (count: number, extra: Record<string, { name: string; environment: string }> = {}): PlatformConfig => ({
    ...platformConfig,
    ...PIPELINE,
    applicationSharding: { by: 'hash', shards: 4 },
    applications: { ...Object.fromEntries(Array.from({ length: count }, (_, i) => [`app-${i}-dev`, { name: `app-${i}`, environment: 'dev' }])), ...extra },
  });

  it('ci-access does not grow with the number of applications: byte for byte the same at 10 and at 5,000 (hash shards)', () => {
    const ten = synthesizePlatform(manyApplications(10));
    const many = synthesizePlatform(manyApplications(5000));
    // The same stacks (every shard holds an application at 10 already), so the same grant names.
    expect(Object.keys(many.stacks)).toEqual(Object.keys(ten.stacks));
    expect(Buffer.byteLength(many.raw['ci-access'])).toBe(Buffer.byteLength(ten.raw['ci-access']));
    expect(many.raw['ci-access']).toBe(ten.raw['ci-access']);
    // ... while the shards hold the 5,000 applications' grants.
    expect(many.raw['app-roles-00'].length).toBeGreaterThan(50 * ten.raw['app-roles-00'].length / 10);
  });

  it('adding one application changes only its shard stack\'s cdk.tf.json', () => {
    const before = synthesizePlatform(manyApplications(40));
    const after = synthesizePlatform(manyApplications(40, { 'billing-dev': { name: 'billing', environment: 'dev' } }));
    const changed = Object.keys(after.raw).filter((s) => after.raw[s] !== before.raw[s]);
    expect(Object.keys(after.raw)).toEqual(Object.keys(before.raw));
    // billing-dev's shard: the first 8 hex digits of SHA-256 of its role name, modulo 4 (docs/sharding.md).
    const shard = parseInt(createHash('sha256').update('billing-dev').digest('hex').slice(0, 8), 16) % 4;
    expect(changed).toEqual([`app-roles-0${shard}`]);
    expect(after.raw[`app-roles-0${shard}`]).toContain('auth/approle/role/billing-dev');
  });
});
