import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { AccessDiff, diffAccess, hasAccessChange } from '../../../lib/access/access-diff';
import { renderAccessDiffMarkdown } from '../../../lib/access/access-diff-markdown';
import { AccessModel } from '../../../lib/access/access-model';
import { identityKindOf } from '../../../lib/access/invariant-subjects';
import { planReviewNeedsAttention, reviewSavedPlans } from '../../../lib/access/plan-review';
import { readStoreConfiguration, REVIEWED_ATTRIBUTES } from '../../../lib/access/store-configuration';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { runCli } from '../../../lib/cli/run-cli';
import { AccessInvariant } from '../../../lib/invariants/access-invariant';
import { readSavedPlan } from '../../../lib/sources/saved-plan';
import { readSynthOutput } from '../../../lib/sources/synth-output';
import { ACCESS_FIXTURES } from '../../support/paths';
import { appliedValues, planDocument } from '../../support/saved-plan-document';

/** Dev applications never read outside their environment: the wildcard fixture breaks it. */
const DEV_STAYS_DEV: AccessInvariant = {
  id: 'dev-stays-dev',
  reason: 'a dev application never reads production',
  who: { kind: 'application', name: 'approle/*-dev' },
  paths: ['secret/data/acme/prod/*'],
  capabilities: ['read'],
};
/** Broken on base already: registry-ci reads the registry accounts. */
const NO_CI_REGISTRY: AccessInvariant = { id: 'no-ci-registry', reason: 'r', who: { kind: 'ci' }, paths: ['secret/data/registry/*'], capabilities: ['read'] };

async function diff(head: string, invariants: readonly AccessInvariant[]): Promise<AccessDiff> {
  const parser = new PolicyParser();
  const load = async (dir: string) => AccessModel.load(readStoreConfiguration(path.join(ACCESS_FIXTURES, dir)), parser);
  return diffAccess(await load('base'), await load(head), { invariants });
}

const invariantFlags = (d: AccessDiff) => d.flags.filter((f) => f.kind === 'invariant-broken').map((f) => `${f.identity}: ${f.message}`);

describe('access-diff: a change that breaks an access invariant is a blocking flag naming the change', () => {
  it('names the invariant, the identity, the rule and policy that grant it, and that this change brings it', async () => {
    const d = await diff('head-wildcard-widened', [DEV_STAYS_DEV]);
    expect(invariantFlags(d)).toEqual([
      'approle/orchestrator-dev: this change breaks it: invariant `dev-stays-dev` (a dev application never reads production): rule `secret/data/acme/*` (`orchestrator-dev`) gives application identity `approle/orchestrator-dev` `read` on `secret/data/acme/prod/w`, which `secret/data/acme/prod/*` covers',
    ]);
    expect(d.flags[0].kind).toBe('invariant-broken');
    expect(renderAccessDiffMarkdown(d, { base: 'base', head: 'head' })).toContain('- **access invariant broken**, `approle/orchestrator-dev`: this change breaks it');
    expect(invariantFlags(await diff('head-wildcard-widened', []))).toEqual([]);
  });

  it('"no application reads another application\'s paths": the widened wildcard reads the others\' own paths; they do not read its', async () => {
    const cross: AccessInvariant = { id: 'no-cross-app', reason: 'r', who: { kind: 'application' }, paths: ['@other-applications'], capabilities: ['read'] };
    expect(invariantFlags(await diff('head-nothing-changed', [cross]))).toEqual([]);
    const flags = (await diff('head-wildcard-widened', [cross])).flags.filter((f) => f.kind === 'invariant-broken');
    expect(flags.length).toBeGreaterThan(0);
    expect(flags.every((f) => f.identity === 'approle/orchestrator-dev')).toBe(true);
    expect(flags[0].message).toMatch(/^this change breaks it: invariant `no-cross-app` \(r\): rule `secret\/data\/acme\/\*` .*, the own path of `approle\//);
  });

  it('an invariant base already breaks stays a blocking flag on a change that touches nothing', async () => {
    const d = await diff('head-nothing-changed', [NO_CI_REGISTRY]);
    expect(invariantFlags(d)).toEqual([
      expect.stringMatching(/^jwt\/registry-ci: already broken on base, still broken by this change: invariant `no-ci-registry` \(r\): rule `secret\/data\/registry\/svc-executor`/),
      expect.stringMatching(/^jwt\/registry-ci: already broken on base, still broken by this change: invariant `no-ci-registry` \(r\): rule `secret\/data\/registry\/svc-orchestrator`/),
    ]);
    expect(hasAccessChange(d)).toBe(true);
    expect(hasAccessChange(await diff('head-nothing-changed', []))).toBe(false);
  });

  it('the saved-plan review (--plans) flags it too and needs attention', async () => {
    const synthesized = readSynthOutput(path.join(ACCESS_FIXTURES, 'base'));
    const stack = synthesized.find((s) => s.name === 'app-roles')!;
    const policy = 'vault_policy.orchestrator-dev_policy_125D2537';
    const before = appliedValues(stack).get(policy)!;
    const plan = readSavedPlan(
      planDocument(stack, [{ address: policy, actions: ['update'], before, after: { ...before, policy: 'path "secret/data/acme/prod/*" { capabilities = ["read"] }\n' }, afterUnknown: {} }]),
      'app-roles',
      'app-roles.tfplan',
      'sha',
      REVIEWED_ATTRIBUTES,
    );
    const review = await reviewSavedPlans(synthesized, [plan], undefined, { invariants: [DEV_STAYS_DEV] });
    expect(review.diff.flags.filter((f) => f.kind === 'invariant-broken').map((f) => f.identity)).toEqual(['approle/orchestrator-dev']);
    expect(planReviewNeedsAttention(review)).toBe(true);
  });

  it('the command reads --invariants (YAML) and exits 1 on a change that breaks one; a missing file is a usage error', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inv-diff-'));
    try {
      const file = path.join(dir, 'inv.yaml');
      fs.writeFileSync(file, 'invariants:\n  - id: dev-stays-dev\n    reason: a dev application never reads production\n    who: { kind: application, name: "approle/*-dev" }\n    paths: ["secret/data/acme/prod/*"]\n    capabilities: [read]\n');
      const run = async (...args: string[]) => {
        const out: string[] = [];
        const err: string[] = [];
        const code = await runCli(['access-diff', ...args], { env: {}, cwd: ACCESS_FIXTURES, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
        return { code, out: out.join('\n'), err: err.join('\n') };
      };
      const broken = await run('base', 'head-wildcard-widened', '--invariants', file, '--format', 'json');
      expect(broken.code).toBe(1);
      expect(JSON.parse(broken.out).flags[0]).toMatchObject({ kind: 'invariant-broken', identity: 'approle/orchestrator-dev' });
      const missing = await run('base', 'head-nothing-changed', '--invariants', path.join(dir, 'none.yaml'));
      expect(missing.code).toBe(2);
      expect(missing.err).toContain('there is no such file');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('identity kinds of a configuration read without its constructs', () => {
  it('tells people, applications, CI roles and the configuration pipeline\'s roles apart', async () => {
    const model = await AccessModel.load(readStoreConfiguration(path.join(ACCESS_FIXTURES, 'base')));
    const kinds = model.identities.map((i) => `${i.identity.name} ${identityKindOf(i.identity)}`);
    expect(kinds).toContain('jwt/registry-ci ci');
    expect(kinds).toContain('approle/orchestrator-dev application');
    const base = model.identities[0].identity;
    expect(identityKindOf({ ...base, method: 'jwt', bindings: { bound_claims: { project_id: ['42'], ref_protected: ['true'], ref_type: ['branch'] } } })).toBe('pipeline');
    expect(identityKindOf({ ...base, method: 'jwt', bindings: { bound_claims: { project_id: ['42'], project_path: ['a/b'] } } })).toBe('ci');
    expect(identityKindOf({ ...base, method: 'oidc', bindings: {} })).toBe('person');
  });
});
