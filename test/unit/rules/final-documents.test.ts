/**
 * Rules read what the engine reads (issue 45): the name rules, the shared-state rule and the
 * store-object rules evaluate each stack's final document (after every element and stack
 * `addOverride`, the backend a class writes), exactly the JSON the engine loads, and name the
 * construct and the override that produced the value they report.
 */
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { JwtAuthBackendRole } from '@cdktf/provider-vault/lib/jwt-auth-backend-role';
import { Construct } from 'constructs';
import { TerraformBackend, TerraformResource, TerraformStack } from '../../../lib/framework/framework';
import { Fn, TerraformVariable } from 'cdktf';
import { postgresState, SecretStoreApp, SSI_R1, SSI_R15, SSI_R2 } from '../../../lib';
import { definePlatform } from '../../../lib/platform/platform';
import { FinalStackDocument } from '../../../lib/constructs/final-stack-document';
import { platformConfig as shipped } from '../../../stacks/platform.config';
import { findingsOf } from '../../support/rule-findings';
import { userStack } from '../../support/user-stack';
import { synthesisProblems as problemsOfSynthesis, tempOutdir } from '../../support/synthesized-platform';
import { SeededRandom } from '../../support/seeded-random';
import { PLATFORM_RULES } from '../../../lib/rules/platform-rules';
import { AccessInvariant, AccessInvariants, PlatformDeclarations, SSI_R16 } from '../../../lib';
import { Platform } from '../../../lib/platform/platform';
import { platformConfig } from '../../support/platform-config';
import { invariantViolations } from '../../../lib/invariants/invariant-check';
import { invariantSubjects } from '../../../lib/access/invariant-subjects';
import { AccessModel } from '../../../lib/access/access-model';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';

const OVERWRITE = 'both texts would be written to one store policy, each apply replacing the other, and every role holding it would get the last text written';
const TEXT = 'path "secret/data/team/*" {\n  capabilities = ["read"]\n}\n';

/** A raw policy `innocent` in a user stack (construct path `user/innocent`). */
const innocent = (app: Construct, stack?: TerraformStack): Policy => new Policy(stack ?? userStack(app), 'innocent', { name: 'innocent', policy: TEXT });

/** The problems of a synthesis of the shipped platform with shared state, `change` applied; nothing is written when there are any. */
const synthesisProblems = (change: (app: Construct) => void, backend = postgresState()): string[] => problemsOfSynthesis(shipped, (_p, app) => change(app), backend);

describe('SSI-R2 reads the policy names of the final documents', () => {
  it("a raw policy renamed to registry-ci by addOverride('name', …) is reported, naming the override", () => {
    expect(findingsOf(SSI_R2, (_p, app) => void innocent(app).addOverride('name', 'registry-ci'))).toEqual([
      `[user/innocent] SSI-R2 name = "registry-ci": is already declared by ci-access/registry-ci/policy: ${OVERWRITE}; name set by addOverride('name', …) on user/innocent`,
    ]);
  });

  it('a raw policy renamed by a stack override (resource.vault_policy.<id>.name) is reported, naming the stack override', () => {
    expect(
      findingsOf(SSI_R2, (_p, app) => {
        const stack = userStack(app);
        const policy = innocent(app, stack);
        stack.addOverride(`resource.vault_policy.${policy.friendlyUniqueId}.name`, 'registry-ci');
      }),
    ).toEqual([
      `[user/innocent] SSI-R2 name = "registry-ci": is already declared by ci-access/registry-ci/policy: ${OVERWRITE}; name set by the stack override resource.vault_policy.innocent.name on user`,
    ]);
  });

  it('a policy only a stack override writes is reported on the stack', () => {
    expect(findingsOf(SSI_R2, (_p, app) => void userStack(app).addOverride('resource.vault_policy.evil', { name: 'registry-ci', policy: TEXT }))).toEqual([
      `[user] SSI-R2 name = "registry-ci": is already declared by ci-access/registry-ci/policy: ${OVERWRITE}; name written by the stack override resource.vault_policy.evil.name on user`,
    ]);
  });

  it("a namespace removed by addOverride('namespace', undefined) puts the policy in the root namespace: the collision is found", () => {
    const inOther = (app: Construct) => new Policy(userStack(app), 'innocent', { name: 'registry-ci', namespace: 'other', policy: TEXT });
    expect(findingsOf(SSI_R2, (_p, app) => void inOther(app))).toEqual([]);
    expect(findingsOf(SSI_R2, (_p, app) => void inOther(app).addOverride('namespace', undefined))).toEqual([
      `[user/innocent] SSI-R2 name = "registry-ci": is already declared by ci-access/registry-ci/policy: ${OVERWRITE}; namespace removed by addOverride('namespace', …) on user/innocent`,
    ]);
  });

  it('an override of the library\'s own policy name is checked like any other value', () => {
    expect(findingsOf(SSI_R2, (p) => void p.ciAccess.registryCi.policyResource.addOverride('name', 'orchestrator-dev'))).toEqual([
      `[app-roles/orchestrator-dev/policy] SSI-R2 name = "orchestrator-dev": is already declared by ci-access/registry-ci/policy (name set by addOverride('name', …) on ci-access/registry-ci/policy): ${OVERWRITE}`,
    ]);
  });
});

describe('SSI-R1 reads the role names of the final documents', () => {
  it("a raw JWT role renamed to registry-ci by addOverride('role_name', …) is reported, naming the override", () => {
    expect(
      findingsOf(SSI_R1, (_p, app) => {
        const role = new JwtAuthBackendRole(userStack(app), 'role', { backend: 'jwt', roleName: 'innocent', userClaim: 'sub', tokenPolicies: ['secretstore-iac-pipeline'] });
        role.addOverride('role_name', 'registry-ci');
      }),
    ).toEqual([
      "[user/role] SSI-R1 roleName = \"registry-ci\": is already declared by ci-access/registry-ci/role: both would be one role of auth/jwt on the store, each apply overwriting the other's settings and policies; role_name set by addOverride('role_name', …) on user/role",
    ]);
  });
});

describe('SSI-R15 reads the templates of the final documents', () => {
  it('an override that writes an expression the library cannot compute is refused, naming the override', () => {
    expect(findingsOf(SSI_R15, (_p, app) => void innocent(app).addOverride('name', '${var.name}'))).toEqual([
      expect.stringMatching(/^\[user\/innocent\] SSI-R15 name = "\$\{var\.name\}": is a Terraform template the engine evaluates when it plans .*; name set by addOverride\('name', …\) on user\/innocent$/),
    ]);
  });
});

const NO_CI_APPLICATIONS: AccessInvariant = {
  id: 'no-ci-applications',
  reason: 'application secrets are for applications',
  who: { kind: 'ci' },
  paths: ['secret/data/acme/*'],
  capabilities: ['read'],
};

/** `identity can capabilities path` of each SSI-R16 finding. */
const r16Grants = (findings: readonly string[]) => findings.map((f) => /: (\S+) \(\w+\) can (.+?) (\S+), which /.exec(f)?.slice(1).join(' ')).sort();

/** The same of `invariants check` on the output `change` synthesizes without the invariants construct (the rule would stop it). */
async function invariantsCheckGrants(change: (p: Platform) => void, config = platformConfig): Promise<string[]> {
  const outdir = tempOutdir();
  const app = new SecretStoreApp({ outdir });
  change(definePlatform(app, config));
  app.synth();
  const violations = invariantViolations(invariantSubjects(await AccessModel.load(readStoreConfiguration(outdir))), [NO_CI_APPLICATIONS]);
  return violations.map((v) => `${v.identity} ${v.capabilities.join(', ')} ${v.path}`).sort();
}

describe('SSI-R16 builds each role\'s ACL from the final policy texts and token_policies', () => {
  const withInvariant = (change: (p: Platform) => void) => (p: Platform, app: Construct) => {
    new AccessInvariants(app, 'invariants', { invariants: [NO_CI_APPLICATIONS] });
    change(p);
  };
  const widenPolicy = (p: Platform) => void p.ciAccess.registryCi.policyResource.addOverride('policy', 'path "secret/data/acme/*" {\n  capabilities = ["read"]\n}\n');
  const attachApplicationPolicy = (p: Platform) => void p.ciAccess.registryCi.role.addOverride('token_policies', ['orchestrator-dev']);

  it('holds for the platform as declared', () => {
    expect(findingsOf(SSI_R16, withInvariant(() => undefined))).toEqual([]);
  });

  it("addOverride('policy', …) on a library policy is a violation, naming the override, as invariants check finds it", async () => {
    const found = findingsOf(SSI_R16, withInvariant(widenPolicy));
    expect(found).toEqual([
      expect.stringMatching(/^\[ci-access\/registry-ci\] SSI-R16 policy\.rules\["secret\/data\/acme\/\*"\] = \["read"\]: breaks invariant "no-ci-applications" .*jwt\/registry-ci \(ci\) can read secret\/data\/acme\/.*granted by policy set by addOverride\('policy', …\) on ci-access\/registry-ci\/policy\)/),
    ]);
    expect(r16Grants(found)).toEqual(await invariantsCheckGrants(widenPolicy));
  });

  // A CI job's role a user adds beside the library's (binds the project by path, like registry-ci): its tokens carry an application's policy.
  const rawCiRole = (p: Platform) =>
    void new JwtAuthBackendRole(p.ciAccess, 'user_deployer', {
      backend: 'jwt',
      roleName: 'deployer',
      roleType: 'jwt',
      userClaim: 'project_path',
      boundAudiences: ['https://secretstore.example'],
      boundClaims: { project_path: 'acme/deployer' },
      tokenPolicies: ['orchestrator-dev'],
    });
  const jwtMountAddress = (p: Platform) => {
    const mount = p.ciAccess.node.findAll().find((c): c is TerraformResource => TerraformResource.isTerraformResource(c) && c.terraformResourceType === 'vault_jwt_auth_backend')!;
    return `${mount.terraformResourceType}.${mount.friendlyUniqueId}`;
  };
  const overrideOnlyRole = (p: Platform) =>
    void p.ciAccess.addOverride('resource.vault_jwt_auth_backend_role.evil', {
      backend: 'jwt',
      role_name: 'evil',
      role_type: 'jwt',
      user_claim: 'project_path',
      bound_audiences: ['https://secretstore.example'],
      bound_claims: { project_path: 'acme/evil' },
      token_policies: ['orchestrator-dev'],
      // Ordered after the mount its stack enables (SSI-R18), as a block the engine can apply.
      depends_on: [jwtMountAddress(p)],
    });

  it('a role no library construct wrote (a provider resource) is checked like the library\'s: the violation is found, as invariants check finds it', async () => {
    const found = findingsOf(SSI_R16, withInvariant(rawCiRole));
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((f) => f.startsWith('[ci-access/user_deployer] SSI-R16 ') && f.includes('jwt/deployer (ci) can read'))).toBe(true);
    expect(r16Grants(found)).toEqual(await invariantsCheckGrants(rawCiRole));
  });

  it('a role only a stack override writes is checked too, reported on the stack', async () => {
    // Without the configuration pipeline: with it, SSI-R17 refuses the synthesis (its roles could not write the role), and invariants check would have no output to read.
    const noPipeline = { ...platformConfig, configurationProject: undefined };
    const found = findingsOf(SSI_R16, withInvariant(overrideOnlyRole), noPipeline);
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((f) => f.startsWith('[ci-access] SSI-R16 ') && f.includes('jwt/evil (ci) can read'))).toBe(true);
    expect(r16Grants(found)).toEqual(await invariantsCheckGrants(overrideOnlyRole, noPipeline));
  });

  it("a library role renamed by addOverride('role_name', …) is checked under the name the engine writes", () => {
    const renamed = (p: Platform) => {
      p.ciAccess.registryCi.role.addOverride('role_name', 'registry-ci-2');
      attachApplicationPolicy(p);
    };
    const found = findingsOf(SSI_R16, withInvariant(renamed));
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((f) => f.includes('jwt/registry-ci-2 (ci) can read'))).toBe(true);
  });

  it("addOverride('token_policies', […]) on a library role is a violation, naming the override, as invariants check finds it", async () => {
    const found = findingsOf(SSI_R16, withInvariant(attachApplicationPolicy));
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((f) => f.startsWith('[ci-access/registry-ci] SSI-R16 ') && f.includes("token_policies set by addOverride('token_policies', …) on ci-access/registry-ci/role"))).toBe(true);
    expect(r16Grants(found)).toEqual(await invariantsCheckGrants(attachApplicationPolicy));
  });
});

/** A backend class that writes `local` under another class name. */
class SharedLookingBackend extends TerraformBackend {
  constructor(scope: Construct) {
    super(scope, 'backend', 'local');
  }

  protected override synthesizeAttributes(): { [name: string]: unknown } {
    return { path: 'terraform.tfstate' };
  }

  getRemoteStateDataSource(): never {
    throw new Error('not used');
  }
}

describe('the shared-state rule reads the final terraform.backend', () => {
  const rule = (stacks: string[], how: string) =>
    expect.stringContaining(`[ci-access/pipeline] stateBackend = ${JSON.stringify(stacks)}: must be a shared state backend for every stack the pipeline runs (these keep a local state file (the engine loads a local backend: ${how}))`);

  it('a pg backend overridden to local is refused, naming the stack override', () => {
    const problems = synthesisProblems((app) => {
      const stack = app.node.findChild('ci-access') as TerraformStack;
      stack.addOverride('terraform.backend.pg', undefined);
      stack.addOverride('terraform.backend.local', { path: 'x.tfstate' });
    });
    expect(problems).toEqual([rule(['ci-access'], "ci-access: set by the stack override terraform.backend.pg, terraform.backend.local on ci-access, written by ci-access/backend (PgBackend)")]);
  });

  it('a TerraformBackend subclass that renders local is refused, naming its class', () => {
    const problems = synthesisProblems(() => undefined, (stack) => void new SharedLookingBackend(stack));
    expect(problems).toEqual([rule(['ci-access', 'app-roles'], 'ci-access: written by ci-access/backend (SharedLookingBackend); app-roles: written by app-roles/backend (SharedLookingBackend)')]);
  });

  it('the shared backend, unchanged, passes; and the document checked is the document written', () => {
    const outdir = tempOutdir();
    const app = new SecretStoreApp({ outdir });
    definePlatform(app, shipped, postgresState());
    app.synth();
    const written = JSON.parse(require('fs').readFileSync(`${outdir}/stacks/ci-access/cdk.tf.json`, 'utf8'));
    expect(Object.keys(written.terraform.backend)).toEqual(['pg']);
    expect(FinalStackDocument.of(app.node.findChild('ci-access') as TerraformStack).backendTypes).toEqual(['pg']);
  });
});

describe('escape hatches that would write what no rule read are refused', () => {
  it('hclOutput', () => {
    const app = new SecretStoreApp({ outdir: tempOutdir(), hclOutput: true });
    definePlatform(app, { ...shipped, configurationProject: undefined });
    expect(app.problems().map((p) => p.message)).toContainEqual(expect.stringMatching(/^hclOutput = true: must be false/));
  });

  it('aspects', () => {
    const problems = synthesisProblems((app) => require('cdktf').Aspects.of(app.node.findChild('ci-access')).add({ visit: () => undefined }));
    expect(problems).toEqual([expect.stringMatching(/^\[ci-access\] aspects = \["Object"\]: must be empty/)]);
  });
});

/** The verdicts of the name rules: each finding's construct, rule, field, value and the other holder (what is found, not how an override is explained). */
function verdicts(build: (app: Construct) => void): string[] {
  const app = new SecretStoreApp({ outdir: tempOutdir() });
  build(app);
  const d = new PlatformDeclarations(app);
  return PLATFORM_RULES.filter((r) => ['SSI-R1', 'SSI-R2', 'SSI-R9', 'SSI-R15'].includes(r.id))
    .flatMap((r) => r.check(d).map((f) => `[${f.constructPath}] ${f.problem.ruleId} ${f.problem.field} = ${JSON.stringify(f.problem.value)} ${/declared by (\S+?)[:( ]/.exec(f.problem.rule)?.[1] ?? ''}`))
    .sort();
}

describe('property: an override of an identity attribute gets the verdict of the same value given directly', () => {
  const random = SeededRandom.fromEnvironment('final documents');
  const NAMES = ['registry-ci', 'Registry-CI', 'innocent', 'orchestrator-dev', 'default', 'other', '${var.x}', '${lower("REGISTRY-CI")}'];
  const MOUNTS = ['jwt', 'oidc', 'approle', '/jwt/'];
  const NAMESPACES = [undefined, 'team', 'other'];

  for (let round = 0; round < 12; round++) {
    // Each resource: its type, the name and namespace the engine gets, and whether an override (element or stack) sets them.
    const resources = Array.from({ length: 1 + random.int(4) }, (_, i) => ({
      id: `r${i}`,
      role: random.next() < 0.5,
      name: random.pick(NAMES),
      mount: random.pick(MOUNTS),
      namespace: random.pick(NAMESPACES),
      how: random.pick(['direct', 'element', 'stack'] as const),
    }));
    it(`round ${round}: ${resources.map((r) => `${r.role ? 'role' : 'policy'} ${r.name}${r.namespace ? ` in ${r.namespace}` : ''} (${r.how})`).join(', ')}`, () => {
      const build = (overridden: boolean) => (app: Construct) => {
        definePlatform(app, { ...shipped, configurationProject: undefined });
        const stack = userStack(app);
        for (const r of resources) {
          const override = overridden && r.how !== 'direct';
          const name = override ? 'placeholder-name' : r.name;
          const namespace = override ? 'placeholder' : r.namespace;
          const element = r.role
            ? new JwtAuthBackendRole(stack, r.id, { backend: override ? 'placeholder-mount' : r.mount, roleName: name, userClaim: 'sub', ...(namespace ? { namespace } : {}) })
            : new Policy(stack, r.id, { name, policy: TEXT, ...(namespace ? { namespace } : {}) });
          if (!override) continue;
          const set = (attribute: string, value: unknown) =>
            r.how === 'element' ? element.addOverride(attribute, value) : stack.addOverride(`resource.${element.terraformResourceType}.${element.friendlyUniqueId}.${attribute}`, value);
          set(r.role ? 'role_name' : 'name', r.name);
          set('namespace', r.namespace);
          if (r.role) set('backend', r.mount);
        }
      };
      expect(verdicts(build(true))).toEqual(verdicts(build(false)));
    });
  }
});

describe('SSI-R16 and invariants check count the default policy as the store attaches it at login', () => {
  const DEFAULT_TEXT = 'path "secret/data/acme/*" {\n  capabilities = ["read"]\n}\n';
  /** A `default` policy a raw resource writes in the roles' stack: every token without token_no_default_policy carries it. */
  const writeDefault = (p: Platform) => void new Policy(p.ciAccess, 'user_default', { name: 'default', policy: DEFAULT_TEXT });
  const noDefault = (p: Platform) => void p.ciAccess.registryCi.role.addOverride('token_no_default_policy', true);
  const withInvariant = (change: (p: Platform) => void) => (p: Platform, app: Construct) => {
    new AccessInvariants(app, 'invariants', { invariants: [NO_CI_APPLICATIONS] });
    change(p);
  };

  /** `invariants check`'s grants on the shipped output hand-edited: the `default` policy added to ci-access, registry-ci's role edited by `role`. */
  async function handEditedGrants(role: (body: Record<string, unknown>) => void, invariants = [NO_CI_APPLICATIONS]): Promise<string[]> {
    const outdir = tempOutdir();
    const app = new SecretStoreApp({ outdir });
    definePlatform(app, platformConfig);
    app.synth();
    const file = `${outdir}/stacks/ci-access/cdk.tf.json`;
    const doc = JSON.parse(require('fs').readFileSync(file, 'utf8'));
    doc.resource.vault_policy.hand_default = { name: 'default', policy: DEFAULT_TEXT };
    const roles = doc.resource.vault_jwt_auth_backend_role as Record<string, Record<string, unknown>>;
    role(Object.values(roles).find((r) => r.role_name === 'registry-ci')!);
    require('fs').writeFileSync(file, JSON.stringify(doc));
    const violations = invariantViolations(invariantSubjects(await AccessModel.load(readStoreConfiguration(outdir))), invariants);
    return violations.map((v) => `${v.identity} ${v.capabilities.join(', ')} ${v.path}`).sort();
  }

  it('writing a policy named default is refused at synthesis by SSI-R9 (so only hand-edited output reaches the engine with one)', () => {
    expect(findingsOf(PLATFORM_RULES.find((r) => r.id === 'SSI-R9')!, (p) => writeDefault(p))).toEqual([expect.stringMatching(/^\[ci-access\/user_default\] SSI-R9 name = "default": /)]);
  });

  it('a role without token_no_default_policy gains the written default\'s grants: a violation, naming the resource that wrote it; invariants check on hand-edited output agrees', async () => {
    const found = findingsOf(SSI_R16, withInvariant(writeDefault));
    expect(found.length).toBeGreaterThan(0);
    // Every CI role of the platform carries default: each is reported, registry-ci among them, the grant named.
    expect(found).toContainEqual(expect.stringMatching(/^\[ci-access\/registry-ci\] SSI-R16 policy\.rules\["secret\/data\/acme\/\*"\] = \["read"\]: .*jwt\/registry-ci \(ci\) can read secret\/data\/acme\/.*\(policy default; granted by ci-access\/user_default\)/));
    expect(found.every((f) => f.includes('policy default; granted by ci-access/user_default'))).toBe(true);
    const checked = await handEditedGrants(() => undefined);
    expect(checked).toContain(r16Grants(found).find((g) => g!.startsWith('jwt/registry-ci ')));
    expect(r16Grants(found)).toEqual(checked);
  });

  it('a written default whose text the engine learns only when it plans (a file) is reported, not counted as granting nothing', () => {
    const fromFile = (p: Platform) => void new Policy(p.ciAccess, 'user_default', { name: 'default', policy: Fn.file('default.hcl') });
    const found = findingsOf(SSI_R16, withInvariant(fromFile));
    expect(found).toEqual([expect.stringMatching(/^\[ci-access\/user_default\] SSI-R16 policy = "default": is not known at synthesis \(.+\): the access invariants cannot be decided on a role that carries it; write the policy text as a literal$/)]);
  });

  it('a role\'s token_policies entry the engine learns only when it plans (a variable) is reported, not dropped', () => {
    const fromVariable = (p: Platform) => {
      const extra = new TerraformVariable(p.ciAccess, 'extra_policy', { type: 'string' });
      p.ciAccess.registryCi.role.addOverride('token_policies', ['registry-ci', extra.stringValue]);
    };
    const found = findingsOf(SSI_R16, withInvariant(fromVariable));
    expect(found).toEqual([
      expect.stringMatching(/^\[ci-access\/registry-ci\] SSI-R16 token_policies = "\$\{var\.extra_policy\} \(.+\)": holds a policy name not known at synthesis: the access invariants cannot be decided on jwt\/registry-ci; write each policy name as plain text or a reference to a policy of the configuration; token_policies set by addOverride\('token_policies', …\) on ci-access\/registry-ci\/role$/),
    ]);
  });

  it('with token_no_default_policy = true the role carries no default: nothing is reported for it, by either', async () => {
    const found = findingsOf(SSI_R16, withInvariant((p) => (writeDefault(p), noDefault(p))));
    expect(found.some((f) => f.includes('jwt/registry-ci '))).toBe(false);
    const checked = await handEditedGrants((body) => (body.token_no_default_policy = true));
    expect(checked.some((g) => g.startsWith('jwt/registry-ci '))).toBe(false);
    expect(r16Grants(found)).toEqual(checked);
  });

  it('an explicitly listed default stays with token_no_default_policy = true', () => {
    const found = findingsOf(SSI_R16, withInvariant((p) => {
      writeDefault(p);
      noDefault(p);
      p.ciAccess.registryCi.role.addOverride('token_policies', ['registry-ci', 'default']);
    }));
    expect(found.some((f) => f.includes('jwt/registry-ci (ci) can read secret/data/acme/'))).toBe(true);
  });

  it('the stock default policy text causes no report on invariants over secret paths, for every kind and capability', async () => {
    const secrets: AccessInvariant = { id: 'no-one-touches-secrets', reason: 'r', who: { kind: 'any' }, paths: ['secret/data/acme/dev/other/*', 'secret/metadata/acme/dev/other/*'], capabilities: ['read', 'write', 'list', 'delete', 'sudo'] };
    expect(findingsOf(SSI_R16, (_p, app) => new AccessInvariants(app, 'invariants', { invariants: [secrets] }))).toEqual([]);
    const outdir = tempOutdir();
    const app = new SecretStoreApp({ outdir });
    definePlatform(app, platformConfig);
    app.synth();
    const model = await AccessModel.load(readStoreConfiguration(outdir));
    expect(model.identities.some((i) => i.tokenPolicies.includes('default'))).toBe(true);
    expect(invariantViolations(invariantSubjects(model), [secrets])).toEqual([]);
  });
});
