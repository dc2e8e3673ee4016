import * as fs from 'fs';
import * as path from 'path';
import { ApplicationStacks, hashShard, PlatformSettings, postgresState, SecretStoreApp, SecretStoreValidationError, shardLabel, SSI_R1, SSI_R5 } from '../../../lib';
import { AccessModel } from '../../../lib/access/access-model';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { whoCan } from '../../../lib/access/who-can';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { definePlatform } from '../../../lib/platform/platform';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig } from '../../support/platform-config';
import { findingsOf } from '../../support/rule-findings';
import { outputFiles, resources, synthesisProblems, synthesizePlatform, tempOutdir } from '../../support/synthesized-platform';

// Issue 16: the applications split across stacks by a documented key; the AppRole mount stays in
// `app-roles`; each shard is a stack with its own state, applied after the mount stack.

const sharded = (applicationSharding: PlatformConfig['applicationSharding']): PlatformConfig => ({ ...platformConfig, applicationSharding });
const single = synthesizePlatform();
const byEnvironment = synthesizePlatform(sharded({ by: 'environment' }));
const byHash = synthesizePlatform(sharded({ by: 'hash', shards: 8 }));
const SPEC_ROLES = ['authentik-role', 'gitlab-role', 'orchestrator-dev', 'registry'];
/**
 * The configuration pipeline roles' grant in each stack (docs/pipelines.md §9): one per stack and
 * role, so they follow the layout; every other object is compared across layouts.
 */
const GRANT = /^secretstore-iac-(pipeline|plan)-app-roles(-.+)?$/;

/** Role name → [stack, resource address] of every AppRole role of an output. */
function roleHomes(stacks: Record<string, any>): Record<string, [string, string]> {
  const homes: Record<string, [string, string]> = {};
  for (const [name, stack] of Object.entries(stacks)) {
    for (const [id, role] of Object.entries<any>(stack.resource?.vault_approle_auth_backend_role ?? {})) homes[role.role_name] = [name, `vault_approle_auth_backend_role.${id}`];
  }
  return homes;
}

describe('Sharding off (the default): the spec\'s four applications keep their output byte for byte', () => {
  it('no sharding and by "none" synthesize the same files, in the stacks app-roles and ci-access', () => {
    const none = synthesizePlatform(sharded({ by: 'none' }));
    expect(Object.keys(single.stacks)).toEqual(['app-roles', 'ci-access']);
    expect(outputFiles(none.outdir)).toEqual(outputFiles(single.outdir));
    expect(Object.keys(roleHomes(single.stacks)).sort()).toEqual(SPEC_ROLES);
  });

  it('in the mount\'s own stack a role names its mount by reference (the engine creates the mount first)', () => {
    for (const role of resources(single.stacks['app-roles'], 'vault_approle_auth_backend_role')) expect(role.backend).toMatch(/^\$\{vault_auth_backend\.approle_backend_[0-9A-F]+\.path\}$/);
  });
});

describe('By environment: app-roles holds the mount, app-roles-<env> the applications', () => {
  it('synthesizes the mount stack and one stack per environment', () => {
    expect(Object.keys(byEnvironment.stacks)).toEqual(['app-roles', 'app-roles-dev', 'app-roles-shared', 'ci-access']);
    expect(Object.keys(byEnvironment.stacks['app-roles'].resource)).toEqual(['vault_auth_backend', 'vault_policy']);
    expect(resources(byEnvironment.stacks['app-roles'], 'vault_policy').map((p) => p.name)).toEqual(['secretstore-iac-pipeline-app-roles', 'secretstore-iac-plan-app-roles']);
    expect(Object.fromEntries(Object.entries(roleHomes(byEnvironment.stacks)).map(([r, [s]]) => [r, s]))).toEqual({
      'orchestrator-dev': 'app-roles-dev',
      'authentik-role': 'app-roles-shared',
      'gitlab-role': 'app-roles-shared',
      registry: 'app-roles-shared',
    });
  });

  it('a policy is the same text in every layout (its comment names the application under app-roles): a move updates nothing', () => {
    // The pipeline's own policies follow the stacks (its grants, and its roles' rules on them).
    const texts = (stacks: Record<string, any>) =>
      Object.values(stacks)
        .flatMap((st) => resources(st, 'vault_policy').map((p) => `${p.name}\n${p.policy}`))
        .filter((t) => !/^secretstore-iac-(pipeline|plan)(-.+)?\n/.test(t))
        .sort();
    expect(texts(byEnvironment.stacks)).toEqual(texts(single.stacks));
    expect(texts(byHash.stacks)).toEqual(texts(single.stacks));
  });

  it('each application\'s role and policy live in one stack, at the address they had in app-roles', () => {
    const before = roleHomes(single.stacks);
    const after = roleHomes(byEnvironment.stacks);
    for (const role of SPEC_ROLES) expect(after[role][1]).toBe(before[role][1]);
    const policies = (stacks: Record<string, any>) =>
      Object.entries(stacks).flatMap(([s, st]) => Object.keys(st.resource?.vault_policy ?? {}).filter((id) => !id.startsWith('secretstore-iac-grant-')).map((id) => `${s}:${id}`));
    expect(policies(byEnvironment.stacks).filter((p) => p.startsWith('app-roles-')).map((p) => p.split(':')[1]).sort()).toEqual(
      policies(single.stacks).filter((p) => p.startsWith('app-roles:')).map((p) => p.split(':')[1]).sort(),
    );
  });
});

describe('By hash: app-roles-<NN> from a stable hash of the role name', () => {
  it('puts each application in the shard its role name hashes to, creating only the shards in use', () => {
    const homes = roleHomes(byHash.stacks);
    for (const role of SPEC_ROLES) expect(homes[role][0]).toBe(`app-roles-${shardLabel(hashShard(role, 8))}`);
    expect(Object.keys(byHash.stacks).filter((s) => s.startsWith('app-roles-')).sort()).toEqual([...new Set(SPEC_ROLES.map((r) => `app-roles-${shardLabel(hashShard(r, 8))}`))].sort());
  });
});

describe('A shard is a stack of its own, depending on the mount stack, with no cross-stack reference', () => {
  const shardNames = Object.keys(byEnvironment.stacks).filter((s) => s.startsWith('app-roles-'));

  it('names the mount by a literal path, and has no data source (cdktf\'s remote state) or variable', () => {
    for (const name of shardNames) {
      const stack = byEnvironment.stacks[name];
      for (const role of resources(stack, 'vault_approle_auth_backend_role')) expect(role.backend).toBe('approle');
      expect(stack.data).toBeUndefined();
      expect(byEnvironment.raw[name]).not.toMatch(/remote_state|\$\{data\./);
    }
  });

  it('records its dependency on app-roles in cdktf\'s manifest.json', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(byEnvironment.outdir, 'manifest.json'), 'utf8'));
    for (const name of shardNames) expect(manifest.stacks[name].dependencies).toEqual(['app-roles']);
    expect(manifest.stacks['app-roles'].dependencies).toEqual([]);
  });

  it('keeps its own local state file by default, and its own PostgreSQL schema with postgresState()', () => {
    for (const name of shardNames) expect(byEnvironment.stacks[name].terraform.backend.local.path).toBe(`../../../terraform.${name}.tfstate`);
    const outdir = tempOutdir();
    new SecretStoreApp({ outdir }).define((a) => definePlatform(a, sharded({ by: 'environment' }), postgresState())).synth();
    const pg = (s: string) => JSON.parse(fs.readFileSync(path.join(outdir, 'stacks', s, 'cdk.tf.json'), 'utf8')).terraform.backend;
    expect(pg('app-roles-dev')).toEqual({ pg: { schema_name: 'secretstore_iac_app_roles_dev' } });
    expect(pg('app-roles-shared')).toEqual({ pg: { schema_name: 'secretstore_iac_app_roles_shared' } });
  });

  it('refuses a shard whose PostgreSQL schema name would pass 63 bytes (PostgreSQL would cut it, and two shards could share a state)', () => {
    const environment = `e${'x'.repeat(40)}`;
    const app = new SecretStoreApp({ outdir: tempOutdir() }).define((a) => {
      definePlatform(a, sharded({ by: 'environment-hash', shards: 2 }), postgresState()).appRoles.addApplication('long', { name: 'long', environment });
    });
    const problems = (() => {
      try {
        app.synth();
        return [];
      } catch (e) {
        return (e as SecretStoreValidationError).problems.map((p) => `[${p.constructPath}] ${p.message}`);
      }
    })();
    const schema = `secretstore_iac_app_roles_${environment}_${shardLabel(hashShard(`long-${environment}`, 2))}`;
    expect(schema.length).toBeGreaterThan(63);
    expect(problems).toContain(
      `[app-roles-${environment}-${shardLabel(hashShard(`long-${environment}`, 2))}] stateBackend.schemaName = "${schema}": must be at most 63 bytes: PostgreSQL cuts longer names without an error, so two stacks could share one state; shorten the stack name (an environment, an application's stack) or the schemaPrefix`,
    );
    // The spec's stacks and shorter shards stay well within it.
    expect(problems.filter((p) => p.includes('schemaName'))).toHaveLength(1);
  });
});

describe('Agent files, the access model and the reconciliation read every layout alike', () => {
  it('writes the same agent files whatever the sharding (AgentConfigurations sees the shards\' applications)', () => {
    const agents = (outdir: string) => outputFiles(path.join(outdir, 'agents'));
    expect(Object.keys(agents(single.outdir)).length).toBeGreaterThan(0);
    expect(agents(byEnvironment.outdir)).toEqual(agents(single.outdir));
    expect(agents(byHash.outdir)).toEqual(agents(single.outdir));
  });

  it('the access model has the same identities and who-can answers the same', async () => {
    const models = await Promise.all([single, byEnvironment, byHash].map((p) => AccessModel.load(readStoreConfiguration(p.outdir))));
    const identities = (m: AccessModel) => JSON.stringify(m.identities.map((i) => [i.identity.name, i.tokenPolicies.filter((p) => !GRANT.test(p)), i.problems]).sort());
    expect(identities(models[1])).toBe(identities(models[0]));
    expect(identities(models[2])).toBe(identities(models[0]));
    for (const m of models) expect(whoCan(m, 'read', 'secret/data/acme/dev/orchestrator/database').allowed.map((e) => e.identity)).toEqual(['approle/orchestrator-dev']);
  });

  it('drift and adopt see each shard\'s roles under the approle mount, with the same import ids', () => {
    const objects = (outdir: string) => readDeclaredObjects(outdir).filter((o) => !GRANT.test(o.importId)).map((o) => `${o.kind} ${o.importId} ${o.mount ?? ''}`).sort();
    expect(objects(byEnvironment.outdir)).toEqual(objects(single.outdir));
    expect(readDeclaredObjects(byEnvironment.outdir, 'app-roles-dev').map((o) => o.importId)).toEqual(['auth/approle/role/orchestrator-dev', 'orchestrator-dev', 'secretstore-iac-pipeline-app-roles-dev', 'secretstore-iac-plan-app-roles-dev']);
  });
});

describe('The configuration pipeline plans and applies every shard, after the mount stack', () => {
  it('shares the shards among a fixed number of plan and apply jobs, whose apply needs the mount stack\'s apply; each shard keeps its drift job', () => {
    const yaml = fs.readFileSync(path.join(byEnvironment.outdir, 'ci', 'secretstore-iac.gitlab-ci.yml'), 'utf8');
    for (const name of ['app-roles-dev', 'app-roles-shared']) {
      expect(yaml).toContain(`secretstore-iac-drift-${name}:`);
      for (const job of ['plan', 'apply']) expect(yaml).not.toContain(`secretstore-iac-${job}-${name}:`);
    }
    // Two shards: two jobs of each kind (at most one per shard), sharing both shards (the group in the description beside the file).
    const description = JSON.parse(fs.readFileSync(path.join(byEnvironment.outdir, 'ci', 'secretstore-iac.pipeline.json'), 'utf8'));
    expect(description.shardGroups).toEqual([{ name: 'app-roles-shards', stacks: ['app-roles-dev', 'app-roles-shared'], jobs: 2 }]);
    for (const n of [1, 2]) {
      for (const job of ['plan', 'apply']) expect(yaml).toMatch(new RegExp(`secretstore-iac-${job}-app-roles-shards-${n}:[\\s\\S]*?"\\$SECRETSTORE_IAC_BIN" pipeline ${job} --group app-roles-shards --job ${n}`));
      expect(yaml).toMatch(new RegExp(`secretstore-iac-apply-app-roles-shards-${n}:[\\s\\S]*?needs: \\[secretstore-iac-synth, secretstore-iac-plan-app-roles-shards-${n}-default-branch, secretstore-iac-access-diff-default-branch, secretstore-iac-apply-ci-access, secretstore-iac-apply-app-roles\\]`));
    }
    expect(yaml).not.toContain('secretstore-iac-plan-app-roles-shards-3');
    expect(yaml).toMatch(/secretstore-iac-apply-app-roles:[\s\S]*?needs: \[secretstore-iac-synth, secretstore-iac-plan-app-roles-default-branch, secretstore-iac-access-diff-default-branch, secretstore-iac-apply-ci-access\]\n/);
  });
});

describe('The platform rules (SSI-R1..R14) hold across every stack', () => {
  it('hold for the spec\'s applications in every layout', () => {
    for (const applicationSharding of [{ by: 'environment' as const }, { by: 'hash' as const, shards: 8 }, { by: 'environment-hash' as const, shards: 2 }]) {
      expect(synthesisProblems(sharded(applicationSharding))).toEqual([]);
    }
  });

  it('SSI-R1: a role name repeated in another shard is reported', () => {
    expect(
      findingsOf(SSI_R1, (p) => p.appRoles.addApplication('x', { name: 'billing', environment: 'prod', roleName: 'orchestrator-dev' }), sharded({ by: 'environment' })),
    ).toEqual(["[app-roles-prod/x/role] SSI-R1 roleName = \"orchestrator-dev\": is already declared by app-roles-dev/orchestrator-dev/role: both would be one role of auth/approle on the store, each apply overwriting the other's settings and policies"]);
  });

  it('SSI-R5: two applications in different shards reading one path are reported', () => {
    const findings = findingsOf(SSI_R5, (p) => p.appRoles.addApplication('x', { name: 'orchestrator', environment: 'dev', roleName: 'other', stack: 'elsewhere' }), sharded({ by: 'environment' }));
    expect(findings).toEqual([
      '[app-roles-elsewhere/x] SSI-R5 readablePath = "secret/data/acme/dev/orchestrator/*": overlaps secret/data/acme/dev/orchestrator/* of orchestrator-dev (app-roles-dev/orchestrator-dev): cross-application secret access is not permitted',
    ]);
  });
});

describe('An explicit stack, and the problems of sharding, all at once', () => {
  it('an application\'s own stack wins: app-roles-<stack>', () => {
    const p = synthesizePlatform(sharded({ by: 'hash', shards: 8 }), (platform) => platform.appRoles.addApplication('billing-prod', { name: 'billing', environment: 'prod', stack: 'payments' }));
    expect(roleHomes(p.stacks)['billing-prod'][0]).toBe('app-roles-payments');
  });

  it('reports a bad sharding and a bad stack together, naming construct and field; nothing is written', () => {
    expect(
      synthesisProblems(sharded({ by: 'hash', shards: 0 }), (p) => p.appRoles.addApplication('billing', { name: 'billing', environment: 'prod', stack: 'Pay/ments' })),
    ).toEqual([
      expect.stringMatching(/^\[app-roles\] sharding\.shards = 0: must be a whole number from 1 to 100/),
      expect.stringMatching(/^\[app-roles\] applications\["billing"\]\.stack = "Pay\/ments": must be lower-case letters, digits and inner hyphens; it contains upper case, a slash/),
    ]);
  });

  it('the configuration\'s applicationSharding is checked at run time (a JSON or YAML file)', () => {
    expect(synthesisProblems(sharded('hash' as never))).toEqual([expect.stringMatching(/^\[app-roles\] sharding = "hash": must be an object \{ by, shards\? \}/)]);
  });

  it('an unknown field of ApplicationStacks is reported', () => {
    const app = new SecretStoreApp({ outdir: tempOutdir() });
    new ApplicationStacks(app, 'apps', { settings: new PlatformSettings(platformConfig.settings), shardng: { by: 'environment' } } as never);
    expect(app.problems().map((p) => `[${p.constructPath}] ${p.message}`)).toEqual([expect.stringMatching(/^\[apps\] shardng = \{"by":"environment"\}: is not a field here/)]);
  });
});
