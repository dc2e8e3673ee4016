import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { renderDriftMarkdown } from '../../../lib/reconcile/drift-markdown';
import { importBlocks, renderImportFile } from '../../../lib/reconcile/import-blocks';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { DriftReport, detectDrift } from '../../../lib/reconcile/store-drift';
import { DEFAULT_POLICY_TEXT } from '../../../lib/acl/default-policy';
import { AppliedStore, appliedLiveStore, storeTune } from '../../support/applied-live-store';
import { ACCESS_FIXTURES } from '../../support/paths';

// Drift and import blocks on the synthesized base fixture, against a store built in memory from
// the same declarations (as an apply leaves it) and then changed the way operators change stores.
// The same on a real store is proven in test/store/adoption.store.test.ts.

const BASE = path.join(ACCESS_FIXTURES, 'base');
const declared = readDeclaredObjects(BASE);
const configuration = readStoreConfiguration(BASE);
const live = (edit?: (s: AppliedStore) => void) => appliedLiveStore(declared, edit);

const lines = (r: DriftReport) => r.findings.map((f) => `${f.kind} ${f.storePath} [${f.identities.join(' ')}]: ${f.summary}${f.details.map((d) => `\n  ${d}`).join('')}`);
const role = (s: AppliedStore, name: string) => s.roles.find((r) => `${r.mount}/${r.role}` === name)!;

describe('import blocks', () => {
  it('use the provider\'s import id of each resource type', () => {
    const byType = (type: string) => declared.filter((o) => o.type === type).map((o) => o.importId);
    expect(byType('vault_auth_backend')).toEqual(['approle']);
    expect(byType('vault_jwt_auth_backend')).toEqual(['jwt']);
    expect(byType('vault_jwt_auth_backend_role')).toEqual(['auth/jwt/role/registry-ci']);
    expect(byType('vault_approle_auth_backend_role')).toContain('auth/approle/role/orchestrator-dev');
    expect(byType('vault_policy')).toContain('registry-ci');
  });

  it('render byte-identically, sorted by address, whatever the input order', () => {
    const ci = declared.filter((o) => o.stack === 'ci-access');
    const text = renderImportFile(importBlocks([...ci].reverse()));
    expect(text).toBe(renderImportFile(importBlocks(ci)));
    expect(JSON.parse(text).import).toEqual([
      { to: 'vault_jwt_auth_backend.jwt_backend_B86C4D3E', id: 'jwt' },
      { to: 'vault_jwt_auth_backend_role.registry-ci_role_BE46C026', id: 'auth/jwt/role/registry-ci' },
      { to: 'vault_policy.registry-ci_policy_FD942459', id: 'registry-ci' },
    ]);
    expect(text.endsWith('}\n')).toBe(true);
  });

  it('a stack that is not in the output is named', () => {
    expect(() => readDeclaredObjects(BASE, 'nope')).toThrow(`no stack "nope" in ${BASE}: it has app-roles, ci-access`);
  });
});

describe('drift', () => {
  it('none on the store as applied', async () => {
    const r = await detectDrift(declared, configuration, live());
    expect(lines(r)).toEqual([]);
    expect(renderDriftMarkdown(r, 'https://store.example')).toContain('**In sync.**');
  });

  it('the five hand changes, each with its identity and path', async () => {
    const r = await detectDrift(
      declared,
      configuration,
      live((s) => {
        s.policies.set('orchestrator-dev', `${s.policies.get('orchestrator-dev')}\npath "secret/data/other/*" {\n  capabilities = ["read"]\n}\n`);
        role(s, 'approle/authentik-role').fields = { ...role(s, 'approle/authentik-role').fields, token_ttl: 72000 };
        const ci = role(s, 'jwt/registry-ci');
        ci.fields = { ...ci.fields, bound_claims: { ...(ci.fields.bound_claims as object), ref: 'main' } };
        s.policies.delete('registry');
        s.jwtConfigs[0].fields.bound_issuer = 'https://other.example';
      }),
    );
    expect(lines(r)).toEqual([
      expect.stringMatching(/^missing sys\/policies\/acl\/registry \[approle\/registry\]: policy registry is declared but missing on the store: it grants nothing until its stack is applied$/),
      'changed auth/approle/role/authentik-role [approle/authentik-role]: role approle/authentik-role differs\n  token_ttl: declared 12h, store 20h',
      'changed auth/jwt/config [jwt/registry-ci]: JWT method configuration differs\n  bound_issuer: declared "https://gitlab.acme.example", store "https://other.example"',
      expect.stringMatching(/^changed auth\/jwt\/role\/registry-ci \[jwt\/registry-ci\]: role jwt\/registry-ci differs\n  bound_claims: declared .*, store .*ref: main/),
      'changed sys/policies/acl/orchestrator-dev [approle/orchestrator-dev]: policy orchestrator-dev grants different access than declared\n  secret/data/other/*: declared none, store read',
    ]);
    expect(r.access.flags.map((f) => `${f.kind} ${f.identity}`)).toEqual(
      expect.arrayContaining(['wildcard-broadened approle/orchestrator-dev', 'ttl-raised approle/authentik-role']),
    );
  });

  it('role fields outside the bindings (claim mappings, leeways) are compared too; unset, empty and 0 are the same', async () => {
    // The constructs set these (empty) on every JWT role; the base fixture predates them.
    const withLeeways = declared.map((o) =>
      o.kind === 'jwt-role' ? { ...o, fields: { ...o.fields, claim_mappings: {}, clock_skew_leeway: 0, groups_claim: '', not_before_leeway: 0, verbose_oidc_logging: false } } : o,
    );
    const r = await detectDrift(
      withLeeways,
      configuration,
      live((s) => {
        const ci = role(s, 'jwt/registry-ci');
        ci.fields = { ...ci.fields, claim_mappings: { project_id: 'pid' }, clock_skew_leeway: 120, groups_claim: null, not_before_leeway: 0 };
      }),
    );
    expect(lines(r)).toEqual([
      'changed auth/jwt/role/registry-ci [jwt/registry-ci]: role jwt/registry-ci differs\n  claim_mappings: declared (unset), store {"project_id":"pid"}\n  clock_skew_leeway: declared (unset), store 120',
    ]);
  });

  it('meta-arguments are the engine\'s, not the object\'s: a stack whose every resource depends_on its grant (issue 37) is in sync', async () => {
    // The base fixture with `depends_on` (and a lifecycle block) on every resource, as the stacks of
    // a configuration with a pipeline are synthesized; the store is the one the fixture applied.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-drift-meta-'));
    try {
      fs.cpSync(BASE, dir, { recursive: true });
      for (const stack of fs.readdirSync(path.join(dir, 'stacks'))) {
        const file = path.join(dir, 'stacks', stack, 'cdk.tf.json');
        const json = JSON.parse(fs.readFileSync(file, 'utf8'));
        for (const blocks of Object.values<Record<string, Record<string, unknown>>>(json.resource ?? {})) {
          for (const block of Object.values(blocks)) Object.assign(block, { depends_on: ['vault_policy.grant'], lifecycle: { prevent_destroy: false } });
        }
        fs.writeFileSync(file, JSON.stringify(json));
      }
      const withMeta = readDeclaredObjects(dir);
      expect(withMeta.filter((o) => 'depends_on' in o.fields || 'lifecycle' in o.fields)).toEqual([]);
      const r = await detectDrift(withMeta, readStoreConfiguration(dir), live());
      expect(lines(r)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a namespace\'s built-in token method (type ns_token) is not unmanaged, like the root\'s token method', async () => {
    const r = await detectDrift(
      declared,
      configuration,
      live((s) => {
        s.mounts.push({ path: 'token', type: 'ns_token', accessor: 'auth_ns_token_1', description: 'token based credentials', local: false, sealWrap: false, tune: storeTune() });
        s.mounts.push({ path: 'token2', type: 'userpass', accessor: 'auth_userpass_2', description: '', local: false, sealWrap: false, tune: storeTune() });
      }),
    );
    expect(lines(r)).toEqual(['unmanaged sys/auth/token2 []: auth method token2/ (userpass, accessor auth_userpass_2) is mounted but no stack declares it']);
  });

  it('unmanaged role and policy with the access they give; built-ins are not unmanaged; a changed default is', async () => {
    const r = await detectDrift(
      declared,
      configuration,
      live((s) => {
        s.policies.set('legacy-admin', 'path "*" {\n  capabilities = ["read", "sudo"]\n}\n');
        s.policies.set('response-wrapping', 'path "cubbyhole/response" {\n  capabilities = ["create", "read"]\n}\n');
        s.policies.set('default', `${DEFAULT_POLICY_TEXT}\npath "secret/*" {\n  capabilities = ["read"]\n}\n`);
        s.roles.push({ mount: 'approle', method: 'approle', role: 'legacy-admin', fields: { token_policies: ['legacy-admin'], bind_secret_id: true } });
        s.mounts.push({ path: 'userpass', type: 'userpass', accessor: 'auth_userpass_1', description: '', local: false, sealWrap: false, tune: storeTune() });
      }),
    );
    const found = lines(r);
    expect(found.filter((l) => l.startsWith('unmanaged'))).toEqual([
      // With the changed default, every rule of default is listed (it is no longer the built-in).
      expect.stringMatching(
        /^unmanaged auth\/approle\/role\/legacy-admin \[approle\/legacy-admin\]: role approle\/legacy-admin is on the store but no stack declares it; its tokens get default, legacy-admin\n {2}\*: read, sudo \(from legacy-admin\)\n[\s\S]*\n {2}secret\/\*: read \(from default\)\n/,
      ),
      'unmanaged sys/auth/userpass []: auth method userpass/ (userpass, accessor auth_userpass_1) is mounted but no stack declares it',
      'unmanaged sys/policies/acl/legacy-admin [approle/legacy-admin]: policy legacy-admin is on the store but no stack declares it; it grants sudo on *\n  *: read, sudo',
    ]);
    expect(found.filter((l) => l.startsWith('builtin-changed'))).toEqual([
      expect.stringMatching(/^builtin-changed sys\/policies\/acl\/default \[.*approle\/orchestrator-dev.*\]: the built-in default policy was changed on the store .*\n  secret\/\*: declared none, store read$/),
    ]);
  });

  it('--stack limits to the stack\'s objects and leaves unmanaged objects out', async () => {
    const store = live((s) => {
      s.roles.push({ mount: 'approle', method: 'approle', role: 'legacy-admin', fields: { token_policies: ['x'] } });
      s.jwtConfigs[0].fields.bound_issuer = 'https://other.example';
    });
    expect(lines(await detectDrift(declared, configuration, store, { stack: 'app-roles' }))).toEqual([]);
    expect(lines(await detectDrift(declared, configuration, store, { stack: 'ci-access' })).map((l) => l.split('\n')[0])).toEqual([
      'changed auth/jwt/config [jwt/registry-ci]: JWT method configuration differs',
    ]);
  });

  it('a missing mount and a mount of another type', async () => {
    const r = await detectDrift(
      declared,
      configuration,
      live((s) => {
        s.mounts = s.mounts.filter((m) => m.path !== 'approle');
        s.roles = s.roles.filter((x) => x.mount !== 'approle');
        s.mounts.find((m) => m.path === 'jwt')!.type = 'oidc';
      }),
    );
    const first = lines(r).map((l) => l.split('\n')[0]);
    expect(first).toContain('missing sys/auth/approle []: auth method approle/ (approle) is not mounted');
    expect(first).toContain('changed sys/auth/jwt []: auth method jwt/ is of type oidc, declared jwt');
    expect(first.filter((l) => l.startsWith('missing auth/approle/role/'))).toHaveLength(5);
  });
});

describe('a JWT method mounted but never configured (issue 27)', () => {
  it('drift names it with the fix adopt gives, from the first run after the failed apply (not a field-by-field comparison with nothing)', async () => {
    const r = await detectDrift(declared, configuration, live((s) => {
      s.roles = s.roles.filter((x) => x.mount !== 'jwt');
      s.jwtConfigs = s.jwtConfigs.map((c) => (c.mount === 'jwt' ? { ...c, configured: false } : c));
    }));
    const found = r.findings.filter((f) => f.storePath === 'auth/jwt/config');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ kind: 'changed', stack: 'ci-access', details: [] });
    expect(found[0].summary).toMatch(/^JWT method not configured: jwt\/ is mounted but was never configured \(GET auth\/jwt\/config: 404; .* It holds no role: disable it \(bao auth disable jwt\) and apply; nothing is lost$/);
    expect(renderDriftMarkdown(r, 'https://store')).toContain('disable it (bao auth disable jwt) and apply');
  });

  it('with roles under it, the fix is to write its configuration by hand, not to disable it (its roles would go)', async () => {
    const r = await detectDrift(declared, configuration, live((s) => {
      s.jwtConfigs = s.jwtConfigs.map((c) => (c.mount === 'jwt' ? { ...c, configured: false } : c));
    }));
    const found = r.findings.filter((f) => f.storePath === 'auth/jwt/config');
    expect(found[0].summary).toMatch(/It holds 1 role\(s\): write its configuration by hand \(bao write auth\/jwt\/config \.\.\.\), then run adopt again$/);
    expect(found[0].summary).not.toContain('disable it');
  });
});
