/**
 * SSI-R17 (issue 45, rules read what the engine reads): the configuration pipeline roles' policies
 * are derived from the values the constructs were given; the engine writes the final documents. Each
 * pipeline policy's final text must hold exactly the rules the final store objects need, so that an
 * override that renames an object, adds one, or rewrites a pipeline policy is a synthesis problem
 * naming the override, not an apply refused with 403 (or a token that may write what no stack is).
 */
import { Construct } from 'constructs';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { ApproleAuthBackendRole } from '@cdktf/provider-vault/lib/approle-auth-backend-role';
import { SeededRandom } from '../../support/seeded-random';
import { platformConfig as shipped } from '../../../stacks/platform.config';
import { resources, synthesisProblems, synthesizePlatform } from '../../support/synthesized-platform';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { Platform } from '../../../lib/platform/platform';
import { PlatformSettings, SecretStoreStack, SSI_R17 } from '../../../lib';
import { declaredElement } from '../../support/declared-element';

const TEXT = 'path "secret/data/team/*" {\n  capabilities = ["read"]\n}\n';
const WIDE = 'path "secret/*" {\n  capabilities = ["read"]\n}\n';

/** The SSI-R17 lines of a synthesis of the shipped platform after `change` (nothing is written when there are any). */
const r17 = (change: (p: Platform, app: Construct) => void): string[] => synthesisProblems(shipped, change).filter((l) => l.includes(' SSI-R17 '));

const element = declaredElement;

/** A stack a user adds that the pipeline runs (a SecretStoreStack), with a raw policy `innocent`. */
const userPolicy = (app: Construct): Policy => new Policy(new SecretStoreStack(app, 'user', { settings: new PlatformSettings(shipped.settings) }), 'innocent', { name: 'innocent', policy: TEXT });

describe('SSI-R17: the pipeline policies hold exactly what the final store objects need', () => {
  it('holds for the platform as declared, and for a raw provider resource in a stack the pipeline runs', () => {
    expect(r17(() => undefined)).toEqual([]);
    expect(r17((_p, app) => void userPolicy(app))).toEqual([]);
  });

  it("an object renamed by addOverride('name', …) in a stack with grants: reported on the object (what the grants miss) and on both grants (what they hold that nothing is)", () => {
    const lines = r17((_p, app) => void element(app, 'app-roles/orchestrator-dev/policy').addOverride('name', 'orchestrator-renamed'));
    expect(lines).toEqual([
      expect.stringMatching(/^\[app-roles\/orchestrator-dev\/policy\] SSI-R17 name = "orchestrator-renamed": is written by the engine \(vault_policy\.orchestrator-dev_policy_\w+ in stack app-roles\) where the configuration pipeline's policies do not reach: create, read, update, delete on sys\/policies\/acl\/orchestrator-renamed \(secretstore-iac-pipeline's policy secretstore-iac-pipeline-app-roles\); read on sys\/policies\/acl\/orchestrator-renamed \(secretstore-iac-plan's policy secretstore-iac-plan-app-roles\); .*HTTP 403.*; name set by addOverride\('name', …\) on app-roles\/orchestrator-dev\/policy; give the value on the construct/),
      expect.stringMatching(/^\[app-roles\/secretstore-iac-grant-pipeline-apply\] SSI-R17 policy = "secretstore-iac-pipeline-app-roles": holds rules no store object .*: create, read, update, delete on sys\/policies\/acl\/orchestrator-dev \(derived from app-roles\/orchestrator-dev\/policy as its construct gave it \(name "orchestrator-dev"\), which the engine does not write\)/),
      expect.stringMatching(/^\[app-roles\/secretstore-iac-grant-pipeline-plan\] SSI-R17 policy = "secretstore-iac-plan-app-roles": holds rules no store object .*: read on sys\/policies\/acl\/orchestrator-dev \(derived from/),
    ]);
  });

  it("an object of the roles' own stack renamed: its rules are the roles' own policies', reported the same way", () => {
    const lines = r17((p) => void p.ciAccess.registryCi.policyResource.addOverride('name', 'registry-ci-renamed'));
    expect(lines.map((l) => l.slice(0, l.indexOf(' SSI-R17')))).toEqual(['[ci-access/pipeline-apply/policy]', '[ci-access/pipeline-plan/policy]', '[ci-access/registry-ci/policy]']);
    expect(lines[2]).toContain('create, read, update, delete on sys/policies/acl/registry-ci-renamed (secretstore-iac-pipeline\'s policy secretstore-iac-pipeline)');
    expect(lines[0]).toContain('create, read, update, delete on sys/policies/acl/registry-ci (derived from ci-access/registry-ci/policy');
  });

  it('a raw resource renamed by a stack override, and an object only a stack override writes, are reported naming the stack override', () => {
    expect(
      r17((_p, app) => {
        const policy = userPolicy(app);
        (policy.node.scope as SecretStoreStack).addOverride(`resource.vault_policy.${policy.friendlyUniqueId}.name`, 'renamed');
      })[0],
    ).toMatch(/^\[user\/innocent\] SSI-R17 name = "renamed": .*on sys\/policies\/acl\/renamed .*; name set by the stack override resource\.vault_policy\.innocent\.name on user;/);
    expect(r17((p) => p.appRoles.addOverride('resource.vault_policy.backdoor', { name: 'backdoor', policy: WIDE }))).toEqual([
      expect.stringMatching(/^\[app-roles\] SSI-R17 name = "backdoor": is written by the engine \(vault_policy\.backdoor in stack app-roles\) .*create, read, update, delete on sys\/policies\/acl\/backdoor .*; name written by the stack override resource\.vault_policy\.backdoor\.name on app-roles; declare the object as a construct/),
    ]);
  });

  it("a grant's text widened by addOverride('policy', …) is reported on the grant, naming the override (and what it dropped)", () => {
    const lines = r17((_p, app) => void element(app, 'app-roles/secretstore-iac-grant-pipeline-apply').addOverride('policy', WIDE));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[app-roles\/secretstore-iac-grant-pipeline-apply\] SSI-R17 policy = "secretstore-iac-pipeline-app-roles": holds rules no store object of the pipeline's stacks needs as the engine writes them: read on secret\/\*; and it lacks rules the pipeline needs: .*create, read, update, delete on sys\/policies\/acl\/orchestrator-dev /);
    expect(lines[0]).toContain("; policy set by addOverride('policy', …) on app-roles/secretstore-iac-grant-pipeline-apply;");
  });

  it("a role's own policy rewritten by an override is reported once, on the policy: the role-level rules and every object's rules it lost", () => {
    const lines = r17((_p, app) => void element(app, 'ci-access/pipeline-apply/policy').addOverride('policy', 'path "sys/auth" {\n  capabilities = ["read"]\n}\n'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[ci-access\/pipeline-apply\/policy\] SSI-R17 policy = "secretstore-iac-pipeline": lacks rules the pipeline needs: update on auth\/token\/create .*read on sys\/mounts .*create, read, update, delete on auth\/jwt\/role\/registry-ci /);
    expect(lines[0]).not.toContain('sys/auth ');
  });

  it("a pipeline role's token_policies changed by an override: a policy attached, or the grants taken away, is reported on the role, naming the override", () => {
    // cdktf appends an override's list to the given one: the document holds both.
    expect(r17((_p, app) => void element(app, 'ci-access/pipeline-apply/role').addOverride('token_policies', ['Orchestrator-Dev']))).toEqual([
      `[ci-access/pipeline-apply] SSI-R17 token_policies = ["secretstore-iac-pipeline","secretstore-iac-pipeline-app-roles","orchestrator-dev"]: attaches orchestrator-dev, which the pipeline's stacks do not need (every job of the role would hold it); a configuration pipeline role carries exactly its own policy and its grants (secretstore-iac-pipeline, secretstore-iac-pipeline-app-roles); token_policies set by addOverride('token_policies', …) on ci-access/pipeline-apply/role: leave them to the library`,
    ]);
    expect(r17((_p, app) => void element(app, 'ci-access/pipeline-plan/role').addOverride('token_policies', undefined))).toEqual([
      expect.stringMatching(/^\[ci-access\/pipeline-plan\] SSI-R17 token_policies = \[\]: drops secretstore-iac-plan, secretstore-iac-plan-app-roles \(the apply would be refused with HTTP 403 where it grants\); .*token_policies (removed|set) by addOverride/),
    ]);
  });

  it('a name an override writes as an expression the engine evaluates is compared as the engine evaluates it', () => {
    expect(r17((_p, app) => void element(app, 'app-roles/orchestrator-dev/policy').addOverride('name', '${lower("ORCHESTRATOR-DEV")}'))).toEqual([]);
  });

  it("an object written in a namespace below the role's: its rules are placed with the namespace's prefix (what the store checks), so nothing is reported", () => {
    const inTeam = (p: Platform) => void new Policy(p.appRoles, 'user_ns', { name: 'ns-policy', namespace: 'team-a', policy: TEXT });
    expect(r17(inTeam)).toEqual([]);
    const { stacks } = synthesizePlatform({ ...platformConfig, configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } }, inTeam);
    const grant = resources(stacks['app-roles'], 'vault_policy').find((r: any) => r.name === 'secretstore-iac-pipeline-app-roles');
    expect(grant.policy).toContain('path "team-a/sys/policies/acl/ns-policy" {\n  capabilities = ["create", "read", "update", "delete"]\n}');
    expect(grant.policy).not.toContain('path "sys/policies/acl/ns-policy"');
  });

  it("a pipeline role moved to another namespace by an override: every object outside its namespace, and every grant (looked up in the token's namespace), is reported", () => {
    const lines = r17((p) => void p.ciAccess.pipelineRoles!.apply.role.addOverride('namespace', 'ops'));
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^\[app-roles\/orchestrator-dev\/policy\] SSI-R17 namespace = "": is where the engine writes vault_policy\.orchestrator-dev_policy_\w+ \(stack app-roles\), outside the namespace of the configuration pipeline's secretstore-iac-pipeline \(namespace ops\): .*HTTP 403/,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^\[app-roles\/secretstore-iac-grant-pipeline-apply\] SSI-R17 namespace = "": is where the engine writes secretstore-iac-pipeline's grant secretstore-iac-pipeline-app-roles \(stack app-roles\), while the role's tokens are issued in namespace ops: /),
    );
    // The plan role stayed: nothing of it is reported.
    expect(lines.filter((l) => l.includes('secretstore-iac-plan (namespace'))).toEqual([]);
  });

  it('is a platform rule with its id, checked at every synthesis', () => {
    expect(SSI_R17.id).toBe('SSI-R17');
  });
});

describe('property: SSI-R17 reports exactly the objects whose final path differs from the given one, whatever the override', () => {
  const random = SeededRandom.fromEnvironment('ssi-r17');
  // Given names and the values an override may write: the same, the same as the store names it, an expression the engine evaluates to it, or another name.
  const GIVEN = ['alpha', 'beta-dev', 'gamma'];
  const written = (given: string) => random.pick([given, given.toUpperCase(), ` ${given} `, `\${lower("${given.toUpperCase()}")}`, `${given}-2`, 'delta', `\${"${given}"}`]);
  /**
   * The names of an object's request paths, for the oracle: a role's as written; a policy's as written
   * (the provider requests `sys/policies/acl/<name as given>`, ACL paths are case-sensitive) and as
   * the store files it (trimmed, lower-cased: the library's own reads).
   */
  const paths = (role: boolean, name: string) => new Set(role ? [name] : [name, name.trim().toLowerCase()]);
  const same = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));
  /** What the engine computes from a written value, for the few expressions drawn here (`${lower("X")}`, `${"x"}`). */
  const evaluated = (value: string) => value.replace(/^\$\{lower\("(.*)"\)\}$/, (_m, x: string) => x.toLowerCase()).replace(/^\$\{"(.*)"\}$/, '$1');

  for (let round = 0; round < 10; round++) {
    const resources = Array.from({ length: 1 + random.int(3) }, (_, i) => {
      const given = `${GIVEN[i]}`;
      const role = random.next() < 0.5;
      const how = random.pick(['none', 'element', 'stack'] as const);
      return { id: `r${i}`, role, given, how, value: how === 'none' ? given : written(given) };
    });
    // A name keeps its spaces and case in its request path; the oracle says which overrides move an object.
    const moved = resources.filter((r) => r.how !== 'none' && !same(paths(r.role, evaluated(r.value)), paths(r.role, r.given))).map((r) => `app-roles/${r.id}`);
    // A grant holds a path nothing needs when a given path is not among the final ones.
    const left = resources.some((r) => r.how !== 'none' && [...paths(r.role, r.given)].some((g) => !paths(r.role, evaluated(r.value)).has(g)));
    it(`round ${round}: ${resources.map((r) => `${r.role ? 'role' : 'policy'} ${r.given}${r.how === 'none' ? '' : ` -> ${JSON.stringify(r.value)} (${r.how})`}`).join(', ')}`, () => {
      const lines = r17((p) => {
        for (const r of resources) {
          const element = r.role
            ? new ApproleAuthBackendRole(p.appRoles, r.id, { backend: 'approle', roleName: r.given, tokenPolicies: ['default'] })
            : new Policy(p.appRoles, r.id, { name: r.given, policy: TEXT });
          if (r.how === 'none') continue;
          const attribute = r.role ? 'role_name' : 'name';
          if (r.how === 'element') element.addOverride(attribute, r.value);
          else p.appRoles.addOverride(`resource.${element.terraformResourceType}.${p.appRoles.getLogicalId(element)}.${attribute}`, r.value);
        }
      });
      // Each moved object once (what the grants miss), and nothing on any other object.
      const onObjects = lines.filter((l) => / SSI-R17 (name|role_name) = /.test(l)).map((l) => l.slice(1, l.indexOf(']'))).sort();
      expect(onObjects).toEqual(moved.sort());
      // Both roles' grants are reported when they hold a given path the engine no longer writes.
      const onGrants = lines.filter((l) => / SSI-R17 policy = /.test(l));
      expect(onGrants).toHaveLength(left ? 2 : 0);
    });
  }
});
