/**
 * Issue 45: store namespaces in the access model. A policy `app-x` of namespace `ns1` and `app-x` of
 * the root namespace are different objects, and `approle/app` of `ns1` gets `ns1`'s policies only
 * (its `default` too). Stacks of three namespaces declare a same-named policy with different texts:
 * access-diff, who-can and the invariants answer per namespace. (Before, reading them stopped:
 * "policy "app-x" is declared with different texts in stacks ...", and one policy map by name
 * served every identity.)
 */
import { AccessModel } from '../../../lib/access/access-model';
import { diffAccess } from '../../../lib/access/access-diff';
import { renderAccessDiffMarkdown } from '../../../lib/access/access-diff-markdown';
import { accessReport } from '../../../lib/access/access-report';
import { renderAccessReportMarkdown } from '../../../lib/access/access-report-markdown';
import { invariantSubjects } from '../../../lib/access/invariant-subjects';
import { declaredPolicyIn, storeConfigurationOf } from '../../../lib/access/store-configuration';
import { whoCan } from '../../../lib/access/who-can';
import { findSharedReads } from '../../../lib/access/shared-read';
import { readInvariantDeclaration } from '../../../lib/invariants/invariant-declaration';
import { invariantSelectionProblems } from '../../../lib/invariants/invariant-selection';
import { labelOf } from '../../../lib/access/namespaced-name';
import { invariantViolations } from '../../../lib/invariants/invariant-check';
import { violationText } from '../../../lib/invariants/invariant-violation';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { SynthStack } from '../../../lib/sources/synth-output';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CommandContext } from '../../../lib/cli/command';
import { ExitCode } from '../../../lib/cli/exit-code';
import { runCli } from '../../../lib/cli/run-cli';

const read = (path: string) => `path "${path}" {\n  capabilities = ["read"]\n}\n`;

/** One stack applied in `namespace` (`''` the root) with AppRole roles and policies. */
function stack(name: string, namespace: string, roles: Record<string, string[]>, policies: Record<string, string>): SynthStack {
  return {
    name,
    file: `${name}/cdk.tf.json`,
    namespace,
    metadata: {},
    resources: {
      vault_auth_backend: { approle: { type: 'approle', path: 'approle' } },
      vault_approle_auth_backend_role: Object.fromEntries(
        Object.entries(roles).map(([role, tokenPolicies]) => [role, { backend: 'approle', role_name: role, token_policies: tokenPolicies }]),
      ),
      vault_policy: Object.fromEntries(Object.entries(policies).map(([policy, text]) => [policy.replace(/\W/g, '_'), { name: policy, policy: text }])),
    },
  };
}

const ROOT = stack('root-apps', '', { app: ['app-x'], reader: ['reader'] }, { 'app-x': read('secret/data/root-only/*'), reader: read('ns1/secret/data/shared/*') });
const NS1 = stack(
  'ns1-apps',
  'ns1',
  { app: ['app-x'] },
  { 'app-x': read('secret/data/ns1-only/*'), unused: read('secret/data/nobody/*'), default: read('secret/data/ns1-default') },
);
// ns2 has no policy app-x: the store ignores the name there, whatever the other namespaces hold.
const NS2 = stack('ns2-apps', 'ns2', { app: ['app-x'] }, {});

async function model(stacks: readonly SynthStack[], parser = new PolicyParser()): Promise<AccessModel> {
  const { overridden: _none, ...configuration } = storeConfigurationOf(stacks);
  return AccessModel.load(configuration, parser);
}

const summary = (m: AccessModel) =>
  m.identities.map((i) => [i.identity.name, i.identity.namespace ?? '', i.acl.rules.filter((r) => !m.isBuiltinDefaultOnly(r, i.identity.namespace)).map((r) => r.path.display)]);

describe('store namespaces in the access model (issue 45)', () => {
  it('reads a same-named policy of each namespace as its own object, keyed by namespace and name', () => {
    const configuration = storeConfigurationOf([ROOT, NS1, NS2]);
    expect(configuration.namespaces).toEqual(['', 'ns1', 'ns2']);
    expect([...configuration.policies.keys()].sort()).toEqual(['app-x', 'app-x (namespace ns1)', 'default (namespace ns1)', 'reader', 'unused (namespace ns1)']);
    expect(declaredPolicyIn(configuration, 'ns1', 'app-x')?.text).toBe(read('secret/data/ns1-only/*'));
    expect(declaredPolicyIn(configuration, '', 'app-x')?.text).toBe(read('secret/data/root-only/*'));
    expect(declaredPolicyIn(configuration, 'ns2', 'app-x')).toBeUndefined();
    expect(configuration.identities.map((i) => [i.name, i.namespace])).toEqual([
      ['approle/app', undefined],
      ['approle/app', 'ns1'],
      ['approle/app', 'ns2'],
      ['approle/reader', undefined],
    ]);
    expect(configuration.authMounts!.map((m) => [m.path, m.namespace])).toEqual([
      ['approle', undefined],
      ['approle', 'ns1'],
      ['approle', 'ns2'],
    ]);
  });

  it("gives each identity its namespace's policies only, its namespace's default included; unattached policies are named with their namespace", async () => {
    const m = await model([ROOT, NS1, NS2]);
    expect(summary(m)).toEqual([
      ['approle/app', '', ['secret/data/root-only/*']],
      ['approle/app', 'ns1', ['secret/data/ns1-default', 'secret/data/ns1-only/*']],
      ['approle/app', 'ns2', []],
      ['approle/reader', '', ['ns1/secret/data/shared/*']],
    ]);
    expect(m.get('approle/app (namespace ns2)')!.problems).toEqual([
      'policy "app-x" is not declared in the namespace ns2 in the synthesized stacks; the store ignores a policy it does not have, so it grants nothing here',
    ]);
    expect(m.get('approle/app')!.problems).toEqual([]);
    expect(m.unattachedPolicies).toEqual(['unused (namespace ns1)']);
    expect([m.builtinDefaultIn(''), m.builtinDefaultIn('ns1'), m.builtinDefaultIn('ns2')]).toEqual([true, false, true]);
    const markdown = renderAccessReportMarkdown(accessReport(m));
    expect(markdown).toContain('## `approle/app` (namespace `ns1`)');
    expect(markdown).toContain('- `unused (namespace ns1)`');
    // A name selects that identity in every namespace, a label one namespace's.
    expect(accessReport(m, { identities: ['approle/app (namespace ns1)'] }).identities.map((i) => [i.name, i.namespace])).toEqual([['approle/app', 'ns1']]);
    expect(accessReport(m, { identities: ['approle/app'] }).identities).toHaveLength(3);
  });

  it('who-can answers for the namespace the request is made in: its identities, and those of a namespace above with the path prefixed', async () => {
    const m = await model([ROOT, NS1, NS2]);
    expect(() => whoCan(m, 'read', 'secret/data/ns1-only/a')).toThrow(/several store namespaces \(\(root\), ns1, ns2\).*--namespace/);
    expect(whoCan(m, 'read', 'secret/data/ns1-only/a', { namespace: 'ns1' }).allowed).toEqual([
      { identity: 'approle/app', namespace: 'ns1', rule: 'secret/data/ns1-only/*', policies: ['app-x'] },
    ]);
    // The root's app-x grants secret/data/root-only/* in the root namespace only.
    expect(whoCan(m, 'read', 'secret/data/root-only/a', { namespace: '' }).allowed).toEqual([
      { identity: 'approle/app', rule: 'secret/data/root-only/*', policies: ['app-x'] },
    ]);
    expect(whoCan(m, 'read', 'secret/data/root-only/a', { namespace: 'ns1' }).allowed).toEqual([]);
    expect(whoCan(m, 'read', 'secret/data/ns1-only/a', { namespace: '' }).allowed).toEqual([]);
    expect(whoCan(m, 'read', 'secret/data/ns1-only/a', { namespace: 'ns2' }).allowed).toEqual([]);
    // ns1's default is on ns1's tokens only.
    expect(whoCan(m, 'read', 'secret/data/ns1-default', { namespace: 'ns1' }).allowed.map((e) => [e.identity, e.namespace])).toEqual([['approle/app', 'ns1']]);
    // A root token's policy reaches into ns1 through the path ns1/...: the store checks ns1's requests at ns1/<path> for it.
    const answer = whoCan(m, 'read', 'secret/data/shared/a', { namespace: 'ns1' });
    expect(answer.namespace).toBe('ns1');
    expect(answer.allowed).toEqual([{ identity: 'approle/reader', rule: 'ns1/secret/data/shared/*', policies: ['reader'] }]);
    expect(whoCan(m, 'read', 'secret/data/shared/a', { namespace: 'ns2' }).allowed).toEqual([]);
  });

  it('a configuration of one namespace is answered there without --namespace', async () => {
    const m = await model([NS1]);
    expect(m.namespaces).toEqual(['ns1']);
    expect(whoCan(m, 'read', 'secret/data/ns1-only/a').allowed.map((e) => [e.identity, e.namespace])).toEqual([['approle/app', 'ns1']]);
  });

  it("access-diff: a change of ns1's app-x changes ns1's identity only, and the output names the namespace", async () => {
    const parser = new PolicyParser();
    const base = await model([ROOT, NS1, NS2], parser);
    const changedNs1 = stack('ns1-apps', 'ns1', { app: ['app-x'] }, {
      'app-x': `${read('secret/data/ns1-only/*')}${read('secret/data/ns1-more/*')}`,
      unused: read('secret/data/nobody/*'),
      default: read('secret/data/ns1-default'),
    });
    const head = await model([ROOT, changedNs1, NS2], parser);
    const d = diffAccess(base, head);
    expect(d.added).toEqual([]);
    expect(d.removed).toEqual([]);
    expect(d.unchanged).toBe(3);
    expect(d.changed.map((c) => [c.name, c.namespace, c.rules.map((r) => `${r.path} +${r.gained.join(',')}`)])).toEqual([
      ['approle/app', 'ns1', ['secret/data/ns1-more/* +read']],
    ]);
    const markdown = renderAccessDiffMarkdown(d, { base: 'main', head: 'HEAD' });
    expect(markdown).toContain('### Changed: `approle/app` (namespace `ns1`)');
    expect(markdown).toContain('- `approle/app (namespace ns2)`: policy "app-x" is not declared in the namespace ns2');
    // The same change of the root's app-x is the root identity's.
    const changedRoot = stack('root-apps', '', { app: ['app-x'], reader: ['reader'] }, {
      'app-x': `${read('secret/data/root-only/*')}${read('secret/data/root-more/*')}`,
      reader: read('ns1/secret/data/shared/*'),
    });
    const rootChange = diffAccess(base, await model([changedRoot, NS1, NS2], parser));
    expect(rootChange.changed.map((c) => [c.name, c.namespace])).toEqual([['approle/app', undefined]]);
  });

  it("access-diff: rewriting one namespace's default is that namespace's default-policy flag; an identity moved to another namespace is removed there and added here", async () => {
    const parser = new PolicyParser();
    const base = await model([ROOT, NS1, NS2], parser);
    const ns2Default = stack('ns2-apps', 'ns2', { app: ['app-x'] }, { default: read('secret/data/ns2-default') });
    const d = diffAccess(base, await model([ROOT, NS1, ns2Default], parser));
    expect(d.flags.filter((f) => f.kind === 'default-policy-changed').map((f) => [f.identity, f.namespace, f.message])).toEqual([
      ['default (namespace ns2)', 'ns2', 'the `default` policy of the namespace `ns2` is rewritten by the configuration: it is on every token of the namespace `ns2`, not only on the identities listed here'],
    ]);
    expect(d.changed.map((c) => [c.name, c.namespace])).toEqual([['approle/app', 'ns2']]);
    const moved = diffAccess(await model([NS1], parser), await model([stack('ns1-apps', 'ns3', { app: ['app-x'] }, { 'app-x': read('secret/data/ns1-only/*') })], parser));
    expect([moved.removed.map((i) => [i.name, i.namespace]), moved.added.map((i) => [i.name, i.namespace])]).toEqual([[['approle/app', 'ns1']], [['approle/app', 'ns3']]]);
  });

  it('invariants: each identity is checked on its own namespace\'s grants; a violation names its namespace', async () => {
    const m = await model([ROOT, NS1, NS2]);
    const subjects = invariantSubjects(m);
    expect(subjects.map((s) => [s.name, s.namespace])).toEqual([
      ['approle/app', undefined],
      ['approle/app', 'ns1'],
      ['approle/app', 'ns2'],
      ['approle/reader', undefined],
    ]);
    const violations = invariantViolations(subjects, [
      { id: 'no-app-reads-ns1-only', reason: 'test', who: { kind: 'application', name: 'approle/app' }, paths: ['secret/data/ns1-only/*'], capabilities: ['read'] },
    ]);
    expect(violations.map((v) => [v.identity, v.namespace, v.rule, v.policies])).toEqual([['approle/app', 'ns1', 'secret/data/ns1-only/*', ['app-x']]]);
    expect(violationText(violations[0])).toMatch(/^approle\/app in the namespace ns1 \(application\) can read secret\/data\/ns1-only\//);
    const flags = diffAccess(m, m, {
      invariants: [{ id: 'no-app-reads-root-only', reason: 'test', who: { kind: 'application' }, paths: ['secret/data/root-only/*'], capabilities: ['read'] }],
    }).flags.filter((f) => f.kind === 'invariant-broken');
    expect(flags.map((f) => f.identity)).toEqual(['approle/app']);
  });

  it("invariants: a root rule that reaches into ns1 (`ns1/secret/...`, `+/secret/...`) breaks ns1's invariant paths and other applications' paths there, found behind the prefix; ns1's own identities never reach the root", async () => {
    const peek = stack('root-peek', '', { peek: ['peek'] }, { peek: read('ns1/secret/data/ns1-only/*') });
    const wide = stack('root-wide', '', { wide: ['wide'] }, { wide: read('+/secret/data/ns1-default') });
    const m = await model([ROOT, peek, wide, NS1, NS2]);
    const subjects = invariantSubjects(m);
    const nobodyReadsShared = { id: 'nobody-reads-shared', reason: 'test', who: { kind: 'any' as const }, paths: ['secret/data/shared/*', 'secret/data/ns1-default'], capabilities: ['read' as const] };
    const found = invariantViolations(subjects, [nobodyReadsShared]);
    expect(found.map((v) => [v.identity, v.namespace ?? '', v.rule, v.path])).toEqual([
      // ns1's app reads its own ns1-default (its namespace's default policy): its own namespace's path.
      ['approle/app', 'ns1', 'secret/data/ns1-default', 'secret/data/ns1-default'],
      ['approle/reader', '', 'ns1/secret/data/shared/*', expect.stringMatching(/^ns1\/secret\/data\/shared\//)],
      // `+` matches the namespace's segment: ns1 and ns2 (whose default is the store's) both reached, the first found named.
      ['approle/wide', '', '+/secret/data/ns1-default', 'ns1/secret/data/ns1-default'],
    ]);
    expect(violationText(found[1])).toMatch(/^approle\/reader \(application\) can read ns1\/secret\/data\/shared\/\S* \(rule "ns1\/secret\/data\/shared\/\*", policy reader\)/);
    // ns1's application owns secret/data/ns1-only/* in ns1: the root's peek reads another application's path there.
    const own = invariantViolations(invariantSubjects(await model([ROOT, peek, NS1])), [{ id: 'own-paths-only', reason: 'test', who: { kind: 'application', name: 'approle/peek' }, paths: ['@other-applications'], capabilities: ['read'] }]);
    expect(own.map((v) => [v.identity, v.rule, v.owner, v.path])).toEqual([['approle/peek', 'ns1/secret/data/ns1-only/*', 'approle/app', expect.stringMatching(/^ns1\/secret\/data\/ns1-only\//)]]);
    // The review's shared-read flag sees it too: the root's peek reads ns1's application's path.
    expect(findSharedReads(await model([ROOT, peek, NS1])).map((r) => [r.reader, r.owner, r.path])).toEqual([['approle/peek', labelOf({ name: 'approle/app', namespace: 'ns1' }), expect.stringMatching(/^ns1\/secret\/data\/ns1-only\//)]]);
    // A namespace only the caller knows (a live store's, with no identity of the configuration) is searched too.
    const alone = invariantViolations(invariantSubjects(await model([wide])), [{ ...nobodyReadsShared, paths: ['secret/data/ns1-default'] }], ['', 'ns3']);
    expect(alone.map((v) => [v.identity, v.path])).toEqual([['approle/wide', 'ns3/secret/data/ns1-default']]);
  });

  it('a selector with a namespace selects the identities of that namespace only; one that selects none there says where they are', async () => {
    const m = await model([ROOT, NS1, NS2]);
    const subjects = invariantSubjects(m);
    const noOwnRead = (who: object) => ({ id: 'x', reason: 'test', who, paths: ['secret/data/ns1-only/*', 'secret/data/root-only/*'], capabilities: ['read' as const] });
    const violators = (who: object) => invariantViolations(subjects, [noOwnRead(who) as never]).map((v) => [v.identity, v.namespace ?? '']);
    expect(violators({ kind: 'application', name: 'approle/app' })).toEqual([['approle/app', ''], ['approle/app', 'ns1']]);
    expect(violators({ kind: 'application', name: 'approle/app', namespace: 'ns1' })).toEqual([['approle/app', 'ns1']]);
    expect(violators({ kind: 'application', name: 'approle/app', namespace: '' })).toEqual([['approle/app', '']]);
    // Read from a file, as the security team writes it: canonical (slashes), checked, and a selection of nobody named.
    const { invariants, problems } = readInvariantDeclaration([
      { id: 'a', reason: 'r', who: { kind: 'application', namespace: '/ns1/' }, paths: ['secret/*'], capabilities: ['read'] },
      { id: 'b', reason: 'r', who: { kind: 'application', namespace: 'ns 1' }, paths: ['secret/*'], capabilities: ['read'] },
      { id: 'c', reason: 'r', who: { kind: 'application', namespace: 7 }, paths: ['secret/*'], capabilities: ['read'] },
    ]);
    expect(invariants[0].who).toEqual({ kind: 'application', namespace: 'ns1' });
    expect(problems.map((p) => p.field)).toEqual(['invariants[1].who.namespace', 'invariants[2].who.namespace']);
    const nowhere = invariantSelectionProblems(subjects, [{ id: 'd', reason: 'r', who: { kind: 'application', name: 'approle/reader', namespace: 'ns1' }, paths: ['secret/*'], capabilities: ['read'] }]);
    expect(nowhere.map((p) => p.rule)).toEqual([expect.stringMatching(/: the namespace "ns1" has none of them; they are in the root namespace \(""\)$/)]);
  });

  it('applications of two namespaces reading the same path read two secrets: no shared read, no other application\'s path', async () => {
    const same = (name: string, namespace: string) => stack(name, namespace, { app: ['app-x'], other: ['other'] }, { 'app-x': read('secret/data/a/*'), other: read('secret/data/b/*') });
    const oneNamespace = await model([stack('root-apps', '', { app: ['app-x'], other: ['other'] }, { 'app-x': read('secret/data/a/*'), other: read('secret/data/a/*') })]);
    expect(findSharedReads(oneNamespace).map((s) => [s.reader, s.owner])).toEqual([
      ['approle/app', 'approle/other'],
      ['approle/other', 'approle/app'],
    ]);
    const m = await model([same('root-apps', ''), same('ns1-apps', 'ns1')]);
    expect(findSharedReads(m)).toEqual([]);
    const violations = invariantViolations(invariantSubjects(m), [
      { id: 'own-paths-only', reason: 'test', who: { kind: 'application' }, paths: ['@other-applications'], capabilities: ['read'] },
    ]);
    expect(violations).toEqual([]);
  });

  describe('the CLI on a synthesized output of three namespaces', () => {
    let dir: string;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-namespaces-'));
      const stacks: Record<string, { synthesizedStackPath: string }> = {};
      for (const s of [ROOT, NS1, NS2]) {
        fs.mkdirSync(path.join(dir, 'stacks', s.name), { recursive: true });
        const provider = s.namespace === '' ? [{}] : [{ namespace: s.namespace }];
        fs.writeFileSync(path.join(dir, 'stacks', s.name, 'cdk.tf.json'), JSON.stringify({ provider: { vault: provider }, resource: s.resources }));
        stacks[s.name] = { synthesizedStackPath: `stacks/${s.name}/cdk.tf.json` };
      }
      fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ stacks }));
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    async function cli(argv: string[]) {
      const stdout: string[] = [];
      const stderr: string[] = [];
      const context: CommandContext = { env: {}, cwd: dir, isTerminal: false, stdout: (l) => stdout.push(l), stderr: (l) => stderr.push(l) };
      const code = await runCli(argv, context);
      return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
    }

    it('who-can asks which namespace (exit 2), then answers there, naming the identities with their namespace', async () => {
      const ask = await cli(['who-can', 'read', 'secret/data/ns1-only/a', dir]);
      expect(ask.code).toBe(ExitCode.usage);
      expect(ask.stderr).toContain('several store namespaces ((root), ns1, ns2)');
      const ns1 = await cli(['who-can', 'read', 'secret/data/ns1-only/a', dir, '--namespace', 'ns1']);
      expect({ code: ns1.code, stdout: ns1.stdout }).toEqual({
        code: ExitCode.ok,
        stdout: 'read on secret/data/ns1-only/a in the namespace ns1:\n  approle/app (namespace ns1)  via "secret/data/ns1-only/*" (policies: app-x)',
      });
      const shared = await cli(['who-can', 'read', 'secret/data/shared/x', dir, '--namespace', '/ns1/']);
      expect(shared.stdout).toBe('read on secret/data/shared/x in the namespace ns1:\n  approle/reader  via "ns1/secret/data/shared/*" (policies: reader)');
      const root = await cli(['who-can', 'read', 'secret/data/ns1-only/a', dir, '--namespace', '', '--format', 'json']);
      expect(JSON.parse(root.stdout).allowed).toEqual([]);
      expect((await cli(['who-can', 'read', 'x', dir, '--namespace', 'sys'])).code).toBe(ExitCode.usage);
    });

    it('access names each identity with its namespace and lists unattached policies with theirs', async () => {
      const r = await cli(['access', dir]);
      expect(r.code).toBe(ExitCode.ok);
      expect(r.stdout).toContain('## `approle/app` (namespace `ns2`)');
      expect(r.stdout).toContain('**Problem:** policy "app-x" is not declared in the namespace ns2 in the synthesized stacks');
      expect(r.stdout).toContain('- `unused (namespace ns1)`');
    });
  });
});

describe('a policy text the store would refuse is named with its namespace', () => {
  const bad = 'path "secret/data/x" {\n  capabilities = ["fly"]\n}\n';
  it('in ns1: the error says which of the same-named policies it is; at the root: the name alone, as before', async () => {
    const ns1 = stack('ns1-apps', 'ns1', { app: ['app-x'] }, { 'app-x': bad });
    await expect(model([ROOT, ns1])).rejects.toThrow(/^policy "app-x" \(namespace ns1\): /);
    const root = stack('root-apps', '', { app: ['app-x'] }, { 'app-x': bad });
    await expect(model([root])).rejects.toThrow(/^policy "app-x": /);
  });
});
