import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { AccessModel } from '../../../lib/access/access-model';
import { accessReport } from '../../../lib/access/access-report';
import { renderAccessReportMarkdown } from '../../../lib/access/access-report-markdown';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { synthesizePlatform } from '../../support/synthesized-platform';
import { ACCESS_FIXTURES } from '../../support/paths';

const FIXTURES = ACCESS_FIXTURES;

async function modelOf(dir: string): Promise<AccessModel> {
  return AccessModel.load(readStoreConfiguration(dir));
}

const made: string[] = [];
afterAll(() => made.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** Writes a one-stack synthesized output holding `resources`, returns its directory. */
function outputWith(resources: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'access-report-'));
  made.push(dir);
  fs.mkdirSync(path.join(dir, 'stacks', 's'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'stacks', 's', 'cdk.tf.json'), JSON.stringify({ resource: resources }));
  fs.writeFileSync(
    path.join(dir, 'manifest.json'),
    JSON.stringify({ stacks: { s: { name: 's', synthesizedStackPath: 'stacks/s/cdk.tf.json' } }, version: '0.21.0' }),
  );
  return dir;
}

const SPEC_2_3_PATHS = [
  'secret/data/codequality/svc-orchestrator',
  'secret/data/orchestrator/e2e-test-user',
  'secret/data/registry/svc-executor',
  'secret/data/registry/svc-orchestrator',
  'secret/data/testreport/svc-orchestrator',
  'secret/data/vulnmgmt/svc-orchestrator',
];

describe('access report of the platform stacks', () => {
  it('registry-ci shows exactly the six paths of spec §2.3, read only', async () => {
    const platform = synthesizePlatform();
    const report = accessReport(await modelOf(platform.outdir), { identities: ['jwt/registry-ci'] });
    const [registryCi] = report.identities;
    expect(registryCi.rules.map((r) => [r.path, r.capabilities])).toEqual(SPEC_2_3_PATHS.map((p) => [p, ['read']]));
    expect(registryCi.bindings.bound_audiences).toBeDefined();
    expect(registryCi.problems).toEqual([]);
  });

  it('every application reads only below its own prefix', async () => {
    const report = accessReport(await modelOf(synthesizePlatform().outdir));
    for (const identity of report.identities.filter((i) => i.method === 'approle')) {
      for (const rule of identity.rules) expect(rule.capabilities).toEqual(['read']);
      expect(identity.rules.every((r) => r.path.endsWith('/*'))).toBe(true);
    }
  });
});

describe('access report of a hand-written output', () => {
  it('joins roles to policies (references resolved) with bindings and TTLs', async () => {
    const report = accessReport(await modelOf(path.join(FIXTURES, 'base')));
    expect(report.stacks).toEqual(['app-roles', 'ci-access']);
    expect(report.identities.map((i) => i.name)).toEqual([
      'approle/audit-agent',
      'approle/authentik-role',
      'approle/gitlab-role',
      'approle/orchestrator-dev',
      'approle/registry',
      'jwt/registry-ci',
    ]);
    const ci = report.identities.find((i) => i.name === 'jwt/registry-ci')!;
    expect(ci.mount).toBe('jwt');
    expect(ci.declaredAt).toBe('ci-access/registry-ci/role');
    expect(ci.policies).toEqual(['default', 'registry-ci']);
    expect(ci.bindings).toMatchObject({
      bound_audiences: ['https://gitlab.acme.example'],
      bound_claims: { namespace_path: ['acme', 'acme/*'] },
      bound_claims_type: 'glob',
      bound_issuer: 'https://gitlab.acme.example',
      token_ttl: 3600,
    });
    expect(ci.rules.map((r) => r.path)).toEqual(SPEC_2_3_PATHS);
    expect(ci.omittedDefaultRules).toBe(17);
  });

  it('foreign policies (hand-written HCL with the legacy syntax, JSON) are read', async () => {
    const report = accessReport(await modelOf(path.join(FIXTURES, 'base')), { identities: ['approle/audit-agent'] });
    const [audit] = report.identities;
    expect(audit.defaultPolicy).toBe(false);
    expect(audit.rules.map((r) => [r.path, r.capabilities, r.policies])).toEqual([
      ['secret/metadata/acme/*', ['list'], ['ops-audit']],
      ['sys/audit', ['read', 'list'], ['ops-audit']],
      ['sys/metrics', ['read'], ['metrics-reader']],
    ]);
    expect(audit.bindings).toMatchObject({ secret_id_ttl: 3600, token_ttl: 1800 });
  });

  it('--include-default lists the built-in default policy on every identity that has it', async () => {
    const model = await modelOf(path.join(FIXTURES, 'base'));
    const report = accessReport(model, { includeDefault: true, identities: ['jwt/registry-ci'] });
    const rules = report.identities[0].rules;
    expect(rules.filter((r) => r.builtinDefault)).toHaveLength(17);
    expect(rules.find((r) => r.path === 'identity/entity/id/{{identity.entity.id}}')?.capabilities).toEqual(['read']);
  });

  it('Markdown: one section per identity, bindings then paths', async () => {
    const markdown = renderAccessReportMarkdown(accessReport(await modelOf(path.join(FIXTURES, 'base'))));
    expect(markdown).toContain('## `jwt/registry-ci`');
    expect(markdown).toContain('| token_ttl | 1h |');
    expect(markdown).toContain('| secret_id_ttl | 0 (no expiry) |');
    expect(markdown).toContain('| bound_claims | `namespace_path: acme \\| acme/*` |');
    expect(markdown).toContain('| `secret/data/registry/svc-orchestrator` | read | registry-ci |');
    expect(markdown).toContain('Plus the 17 rules of the built-in `default` policy.');
  });

  it('is deterministic: the same output twice gives the same bytes', async () => {
    const render = async () => renderAccessReportMarkdown(accessReport(await modelOf(path.join(FIXTURES, 'base'))));
    expect(await render()).toBe(await render());
  });
});

describe('what the analysis cannot take as given is said', () => {
  const approleRole = (policies: string[]) => ({
    vault_auth_backend: { ar: { type: 'approle', path: 'approle' } },
    vault_approle_auth_backend_role: { r: { backend: '${vault_auth_backend.ar.path}', role_name: 'app', token_policies: policies } },
  });

  it('a policy not declared in the stacks grants nothing and is named', async () => {
    const report = accessReport(await modelOf(outputWith(approleRole(['elsewhere']))));
    expect(report.identities[0].problems).toEqual([expect.stringContaining('policy "elsewhere" is not declared')]);
  });

  it('a role listing root can never log in', async () => {
    const model = await modelOf(outputWith(approleRole(['root'])));
    expect(model.get('approle/app')!.loginRefused).toBe(true);
    expect(accessReport(model).identities[0].rules).toEqual([]);
  });

  it('a policy no identity uses is listed', async () => {
    const report = accessReport(
      await modelOf(outputWith({ ...approleRole([]), vault_policy: { p: { name: 'orphan', policy: 'path "x" {\n  capabilities = ["read"]\n}\n' } } })),
    );
    expect(report.unattachedPolicies).toEqual(['orphan']);
  });

  it('a `default` policy declared in the stacks replaces the built-in text', async () => {
    const model = await modelOf(
      outputWith({ ...approleRole([]), vault_policy: { d: { name: 'default', policy: 'path "only/this" {\n  capabilities = ["read"]\n}\n' } } }),
    );
    expect(accessReport(model).identities[0].rules.map((r) => r.path)).toEqual(['only/this']);
  });

  it('an unresolvable reference fails, naming the stack, resource and expression', () => {
    const dir = outputWith({
      vault_approle_auth_backend_role: { r: { role_name: 'app', token_policies: ['${vault_policy.gone.name}'] } },
    });
    expect(() => readStoreConfiguration(dir)).toThrow(
      's: vault_approle_auth_backend_role.r.token_policies: cannot resolve "${vault_policy.gone.name}": no resource vault_policy.gone in stack s',
    );
  });

  it('a computed attribute cannot be resolved offline', () => {
    const dir = outputWith({
      vault_auth_backend: { ar: { type: 'approle' } },
      vault_approle_auth_backend_role: { r: { backend: '${vault_auth_backend.ar.accessor}', role_name: 'app' } },
    });
    expect(() => readStoreConfiguration(dir)).toThrow(/has no configured "accessor" \(a value computed at apply time\)/);
  });

  it('a policy the store would refuse fails the analysis, naming the policy', async () => {
    const dir = outputWith({
      ...approleRole(['bad']),
      vault_policy: { p: { name: 'bad', policy: 'path "x" {\n  capabilities = ["raed"]\n}\n' } },
    });
    await expect(modelOf(dir)).rejects.toThrow('policy "bad": path "x": invalid capability "raed"');
  });

  it('a directory without manifest.json is not an output', () => {
    expect(() => readStoreConfiguration(os.tmpdir())).toThrow(/is not a synthesized output: it has no manifest.json/);
  });
});
