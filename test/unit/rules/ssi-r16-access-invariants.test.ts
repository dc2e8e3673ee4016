import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { AccessInvariant, AccessInvariants, PlatformDeclarations, SSI_R16, SecretStoreApp } from '../../../lib';
import { definePlatform } from '../../../lib/platform/platform';
import { findingsOf } from '../../support/rule-findings';
import { withPeople } from '../../support/people-config';
import { tempOutdir } from '../../support/synthesized-platform';

const NO_CI_REGISTRY: AccessInvariant = { id: 'no-ci-registry', reason: 'registry pushes go through the registry role', who: { kind: 'ci' }, paths: ['secret/data/registry/*'], capabilities: ['read'] };
const ONLY_APPLY_WRITES_POLICIES: AccessInvariant = {
  id: 'only-apply-writes-policies',
  reason: 'policies change through the reviewed pipeline only',
  who: { kind: 'any' },
  except: [{ kind: 'pipeline', name: 'jwt/secretstore-iac-pipeline' }],
  paths: ['sys/policies/acl/*'],
  capabilities: ['write', 'delete'],
};
const NO_PERSON_SUDO: AccessInvariant = { id: 'no-person-sudo', reason: 'people never get sudo', who: { kind: 'person' }, paths: ['*'], capabilities: ['sudo'] };
const NO_PERSON_TEAM: AccessInvariant = { id: 'no-person-runbooks', reason: 'runbooks are read through the portal', who: { kind: 'person' }, paths: ['secret/data/team/*'], capabilities: ['read'] };

const withInvariants = (...invariants: AccessInvariant[]) => (_p: unknown, app: import('constructs').Construct) => new AccessInvariants(app, 'invariants', { invariants });

describe('SSI-R16: no declared role breaks an access invariant', () => {
  it('reports every violation at once, on the role, naming the invariant, identity, capability, path and the declaration that granted it', () => {
    expect(findingsOf(SSI_R16, withInvariants(NO_CI_REGISTRY, NO_PERSON_TEAM), withPeople())).toEqual([
      '[ci-access/registry-ci] SSI-R16 policy.rules["secret/data/registry/svc-executor"] = ["read"]: breaks invariant "no-ci-registry" (registry pushes go through the registry role; declared at invariants): jwt/registry-ci (ci) can read secret/data/registry/svc-executor, which "secret/data/registry/*" covers (policy registry-ci; granted by ci-access/svc-executor); take the grant away or change the invariant',
      '[ci-access/registry-ci] SSI-R16 policy.rules["secret/data/registry/svc-orchestrator"] = ["read"]: breaks invariant "no-ci-registry" (registry pushes go through the registry role; declared at invariants): jwt/registry-ci (ci) can read secret/data/registry/svc-orchestrator, which "secret/data/registry/*" covers (policy registry-ci; granted by ci-access/svc-orchestrator); take the grant away or change the invariant',
      expect.stringMatching(/^\[people\/group-platform-admins\] SSI-R16 policy\.rules\["secret\/data\/team\/runbooks\/\*"\] = \["read"\]: breaks invariant "no-person-runbooks" .*oidc\/platform-admins \(person\) can read secret\/data\/team\/runbooks\/w,/),
    ]);
  });

  it('"only the apply role writes policies": the pipeline roles are told apart by the constructs; naming the plan role instead flags the apply role', () => {
    expect(findingsOf(SSI_R16, withInvariants(ONLY_APPLY_WRITES_POLICIES, NO_PERSON_SUDO), withPeople())).toEqual([]);
    const wrong = { ...ONLY_APPLY_WRITES_POLICIES, except: [{ kind: 'pipeline' as const, name: 'jwt/secretstore-iac-plan' }] };
    const found = findingsOf(SSI_R16, withInvariants(wrong), withPeople());
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((f) => f.startsWith('[ci-access/pipeline-apply] SSI-R16 policy.rules["sys/policies/acl/'))).toBe(true);
    expect(found[0]).toContain('jwt/secretstore-iac-pipeline (pipeline) can create, update, delete sys/policies/acl/');
  });

  it('"no application reads another application\'s paths": a grant into another application\'s subtree is found, naming the owner', () => {
    const cross: AccessInvariant = { id: 'no-cross-app', reason: 'applications read their own paths only', who: { kind: 'application' }, paths: ['@other-applications'], capabilities: ['read'] };
    expect(findingsOf(SSI_R16, withInvariants(cross), withPeople())).toEqual([]);
    const found = findingsOf(
      SSI_R16,
      (p, app) => {
        const [a, b] = new PlatformDeclarations(app).applications;
        a.policy.addRule(b.readablePath.policyPath, ['read'], 'hand-written grant');
        withInvariants(cross)(p, app);
      },
      withPeople(),
    );
    expect(found).toEqual([expect.stringContaining(' (the own path of approle/')]);
    expect(found[0]).toContain('granted by hand-written grant');
  });

  it('an invariant that speaks of no declared role is a problem of its declaration, naming the field and why', () => {
    const misspelt: AccessInvariant = { ...NO_CI_REGISTRY, who: { kind: 'ci', name: 'registry-ci' } };
    const everyone: AccessInvariant = { ...NO_CI_REGISTRY, id: 'everyone-excepted', except: [{ kind: 'any' }] };
    expect(findingsOf(SSI_R16, withInvariants(misspelt, everyone), withPeople())).toEqual([
      expect.stringMatching(/^\[invariants\] SSI-R16 invariant "no-ci-registry"\.who = \{"kind":"ci","name":"registry-ci"\}: selects none of the \d+ declared identities: names are "<auth mount>\/<role>", e\.g\. "jwt\/registry-ci"$/),
      expect.stringMatching(/^\[invariants\] SSI-R16 invariant "everyone-excepted"\.except = \[\{"kind":"any"\}\]: takes away every identity "who" selects/),
    ]);
  });

  it('is one of the rules of every synthesis: the app refuses to write and names the rule', () => {
    const app = new SecretStoreApp({ outdir: tempOutdir() });
    definePlatform(app, withPeople());
    new AccessInvariants(app, 'invariants', { invariants: [NO_CI_REGISTRY] });
    const problems = app.problems().filter((p) => p.message.startsWith('SSI-R16'));
    expect(problems.map((p) => p.constructPath)).toEqual(['ci-access/registry-ci', 'ci-access/registry-ci']);
  });

  it('the platform configuration declares them too (`invariants`: a list, or a file)', () => {
    const app = new SecretStoreApp({ outdir: tempOutdir() });
    definePlatform(app, { ...withPeople(), invariants: [NO_CI_REGISTRY] });
    expect(app.problems().filter((p) => p.message.startsWith('SSI-R16')).map((p) => p.constructPath)).toEqual(['ci-access/registry-ci', 'ci-access/registry-ci']);
    const missing = new SecretStoreApp({ outdir: tempOutdir() });
    definePlatform(missing, { ...withPeople(), invariants: '/nonexistent/secretstore-iac-invariants.yaml' });
    expect(missing.problems().filter((p) => p.constructPath === 'invariants').map((p) => p.message)).toEqual([expect.stringMatching(/^file = "\/nonexistent\/secretstore-iac-invariants.yaml": cannot read the invariants file \/nonexistent\/secretstore-iac-invariants.yaml: there is no such file$/)]);
  });

  it('reads a security team\'s file, and reports a bad declaration as a problem of the construct', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-r16-'));
    try {
      const file = path.join(dir, 'secretstore-iac-invariants.yaml');
      fs.writeFileSync(file, 'invariants:\n  - id: no-ci-registry\n    reason: r\n    who: ci\n    paths: ["secret/data/registry/*"]\n    capabilities: [read]\n');
      expect(findingsOf(SSI_R16, (_p, app) => new AccessInvariants(app, 'invariants', { file }), withPeople())).toHaveLength(2);
      const app = new SecretStoreApp({ outdir: tempOutdir() });
      definePlatform(app, withPeople());
      new AccessInvariants(app, 'invariants', { invariants: [{ ...NO_CI_REGISTRY, capabilities: ['root'] }] });
      new AccessInvariants(app, 'empty');
      expect(app.problems().filter((p) => p.constructPath === 'invariants' || p.constructPath === 'empty')).toEqual([
        { constructPath: 'empty', message: 'invariants = undefined: give invariants, a file, or both' },
        {
          constructPath: 'invariants',
          message: 'invariants[0].capabilities[0] = "root": is not a capability an invariant forbids: use read, write, create, update, patch, delete, list, scan, sudo, subscribe, recover',
        },
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
