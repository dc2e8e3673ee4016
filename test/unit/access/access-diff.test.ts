import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { AccessDiff, diffAccess, hasAccessChange } from '../../../lib/access/access-diff';
import { renderAccessDiffMarkdown } from '../../../lib/access/access-diff-markdown';
import { AccessModel } from '../../../lib/access/access-model';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { ACCESS_FIXTURES } from '../../support/paths';

const FIXTURES = ACCESS_FIXTURES;
const BASE = path.join(FIXTURES, 'base');

async function diff(base: string, head: string): Promise<AccessDiff> {
  const parser = new PolicyParser();
  return diffAccess(
    await AccessModel.load(readStoreConfiguration(base), parser),
    await AccessModel.load(readStoreConfiguration(head), parser),
  );
}

const made: string[] = [];
afterAll(() => made.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** A copy of the base fixture with its stack documents edited by `edit`. */
function variant(edit: (stacks: { ci: any; apps: any }) => void): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'access-diff-'));
  made.push(dir);
  fs.cpSync(BASE, dir, { recursive: true });
  const file = (s: string) => path.join(dir, 'stacks', s, 'cdk.tf.json');
  const ci = JSON.parse(fs.readFileSync(file('ci-access'), 'utf8'));
  const apps = JSON.parse(fs.readFileSync(file('app-roles'), 'utf8'));
  edit({ ci, apps });
  fs.writeFileSync(file('ci-access'), JSON.stringify(ci));
  fs.writeFileSync(file('app-roles'), JSON.stringify(apps));
  return dir;
}

const registryCiRole = (ci: any) => ci.resource.vault_jwt_auth_backend_role['registry-ci_role_BE46C026'];
const registryCiPolicy = (ci: any) => ci.resource.vault_policy['registry-ci_policy_FD942459'];
const flagsOf = (d: AccessDiff) => d.flags.map((f) => `${f.kind} ${f.identity}: ${f.message}`);

describe('access diff on hand-made base/head pairs', () => {
  it('account added: registry-ci gains read on the new account, nothing else', async () => {
    const d = await diff(BASE, path.join(FIXTURES, 'head-account-added'));
    expect(hasAccessChange(d)).toBe(true);
    expect(d.added).toEqual([]);
    expect(d.removed).toEqual([]);
    expect(d.changed).toEqual([
      {
        name: 'jwt/registry-ci',
        method: 'jwt',
        rules: [
          {
            path: 'secret/data/registry/svc-deployer',
            kind: 'exact',
            before: [],
            after: ['read'],
            gained: ['read'],
            lost: [],
            added: true,
            removed: false,
          },
        ],
        bindings: [],
      },
    ]);
    expect(d.flags).toEqual([]);
    expect(d.unchanged).toBe(5);
  });

  it('app added: one identity added with its bindings and paths, no risk', async () => {
    const d = await diff(BASE, path.join(FIXTURES, 'head-app-added'));
    expect(d.added.map((i) => [i.name, i.rules.map((r) => `${r.path} ${r.capabilities.join(',')}`)])).toEqual([
      ['approle/billing-dev', ['secret/data/acme/dev/billing/* read']],
    ]);
    expect(d.added[0].bindings).toMatchObject({ token_ttl: 43200, token_max_ttl: 86400, secret_id_ttl: 0 });
    expect(d.changed).toEqual([]);
    expect(d.flags).toEqual([]);
  });

  it('app removed: the identity and everything it loses', async () => {
    const d = await diff(path.join(FIXTURES, 'head-app-added'), BASE);
    expect(d.removed.map((i) => i.name)).toEqual(['approle/billing-dev']);
    expect(renderAccessDiffMarkdown(d, { base: 'a', head: 'b' })).toContain(
      '### Removed: `approle/billing-dev`\n\nLoses all access: `secret/data/acme/dev/billing/*` (read).',
    );
  });

  it('wildcard widened: flagged as broadened and as reading other applications\' paths', async () => {
    const d = await diff(BASE, path.join(FIXTURES, 'head-wildcard-widened'));
    expect(d.changed.map((c) => [c.name, c.rules.map((r) => `${r.path} +${r.gained} -${r.lost}`)])).toEqual([
      ['approle/orchestrator-dev', ['secret/data/acme/* +read -', 'secret/data/acme/dev/orchestrator/* + -read']],
    ]);
    expect(flagsOf(d)).toEqual([
      'wildcard-broadened approle/orchestrator-dev: `secret/data/acme/*` now grants read, covering `secret/data/acme/dev/orchestrator/*` granted before',
      "shared-read approle/orchestrator-dev: can read `approle/authentik-role`'s `secret/data/acme/shared/identity/*`, " +
        "`approle/gitlab-role`'s `secret/data/acme/shared/sourcehost/*`, `approle/registry`'s `secret/data/acme/shared/registry/*`",
    ]);
  });

  it('TTL raised: the binding changes, and one flag for the three TTLs raised alike', async () => {
    const d = await diff(BASE, path.join(FIXTURES, 'head-ttl-raised'));
    expect(d.changed[0].bindings).toEqual([
      { field: 'token_explicit_max_ttl', before: 3600, after: 7200 },
      { field: 'token_max_ttl', before: 3600, after: 7200 },
      { field: 'token_ttl', before: 3600, after: 7200 },
    ]);
    expect(flagsOf(d)).toEqual(['ttl-raised jwt/registry-ci: `token_explicit_max_ttl`, `token_max_ttl`, `token_ttl` 1h → 2h']);
  });

  it('nothing changed: reworded, reordered policy text is no access change', async () => {
    const head = path.join(FIXTURES, 'head-nothing-changed');
    expect(fs.readFileSync(path.join(head, 'stacks', 'app-roles', 'cdk.tf.json'), 'utf8')).not.toBe(
      fs.readFileSync(path.join(BASE, 'stacks', 'app-roles', 'cdk.tf.json'), 'utf8'),
    );
    const d = await diff(BASE, head);
    expect(hasAccessChange(d)).toBe(false);
    expect(d.unchanged).toBe(6);
    expect(renderAccessDiffMarkdown(d, { base: 'main', head: 'HEAD' })).toBe(
      '## Access changes: `main` → `HEAD`\n\n**No access change.** 6 identities have the same access and bindings.\n',
    );
  });
});

describe('risk flags', () => {
  const jwtMethod = (ci: any) => ci.resource.vault_jwt_auth_backend.jwt_backend_B86C4D3E;

  it('replacing the key source (OIDC discovery → a static public key) is a change of every JWT role, flagged once on the method', async () => {
    const head = variant(({ ci }) => {
      delete jwtMethod(ci).oidc_discovery_url;
      jwtMethod(ci).jwt_validation_pubkeys = ['-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----'];
    });
    const d = await diff(BASE, head);
    expect(hasAccessChange(d)).toBe(true);
    expect(d.changed.map((c) => [c.name, c.bindings.map((b) => b.field)])).toEqual([
      ['jwt/registry-ci', ['jwt_validation_pubkeys', 'oidc_discovery_url']],
    ]);
    expect(flagsOf(d).filter((f) => f.startsWith('trust-changed'))).toHaveLength(2);
    expect(flagsOf(d)).toContain('trust-changed jwt/: `oidc_discovery_url` https://gitlab.acme.example → (unset); whoever it accepts can log in as `jwt/registry-ci`');
    // A PEM key is shown by digest: one line in the flag and in the Markdown tables.
    expect(flagsOf(d)).toContainEqual(expect.stringMatching(/^trust-changed jwt\/: `jwt_validation_pubkeys` \(unset\) → PEM sha256:[0-9a-f]{16}; whoever it accepts can log in as `jwt\/registry-ci`$/));
    expect(d.flags.every((f) => f.kind !== 'trust-changed' || (f.authMethod === 'jwt' && f.identities.join() === 'jwt/registry-ci'))).toBe(true);
  });

  it('a changed issuer or JWKS URL is flagged', async () => {
    const head = variant(({ ci }) => {
      jwtMethod(ci).bound_issuer = 'https://evil.example';
      delete jwtMethod(ci).oidc_discovery_url;
      jwtMethod(ci).jwks_url = 'https://evil.example/keys';
    });
    expect(flagsOf(await diff(BASE, head))).toEqual([
      'trust-changed jwt/: `bound_issuer` https://gitlab.acme.example → https://evil.example; whoever it accepts can log in as `jwt/registry-ci`',
      'trust-changed jwt/: `jwks_url` (unset) → https://evil.example/keys; whoever it accepts can log in as `jwt/registry-ci`',
      'trust-changed jwt/: `oidc_discovery_url` https://gitlab.acme.example → (unset); whoever it accepts can log in as `jwt/registry-ci`',
    ]);
  });

  it('a rewritten default policy lists what every identity loses as well as gains, and is flagged', async () => {
    const head = variant(({ ci }) => {
      ci.resource.vault_policy.default_policy = {
        name: 'default',
        policy: 'path "auth/token/lookup-self" {\n  capabilities = ["read"]\n}\npath "sys/mounts" {\n  capabilities = ["read"]\n}\n',
      };
    });
    const d = await diff(BASE, head);
    const ci = d.changed.find((c) => c.name === 'jwt/registry-ci')!;
    expect(ci.rules.filter((r) => r.path === 'sys/mounts').map((r) => r.gained)).toEqual([['read']]);
    expect(ci.rules.filter((r) => r.path === 'auth/token/renew-self').map((r) => [r.lost, r.removed])).toEqual([[['update'], true]]);
    expect(ci.rules.some((r) => r.path === 'auth/token/lookup-self')).toBe(false);
    expect(flagsOf(d)).toContain(
      'default-policy-changed default: the `default` policy is rewritten by the configuration: it is on every token of the store, not only on the identities listed here',
    );
    const back = await diff(head, BASE);
    expect(flagsOf(back)).toContain(
      'default-policy-changed default: the `default` policy is back to the built-in text: it is on every token of the store, not only on the identities listed here',
    );
    expect(back.changed.find((c) => c.name === 'jwt/registry-ci')!.rules.filter((r) => r.path === 'sys/mounts').map((r) => r.lost)).toEqual([['read']]);
  });

  it('sudo and deny gained, lost and changed are flagged', async () => {
    const head = variant(({ ci }) => {
      registryCiPolicy(ci).policy =
        'path "secret/data/registry/svc-orchestrator" {\n  capabilities = ["read", "sudo"]\n}\n' +
        'path "secret/data/registry/svc-executor" {\n  capabilities = ["deny"]\n}\n';
    });
    const d = await diff(BASE, head);
    expect(flagsOf(d)).toEqual([
      'sudo jwt/registry-ci: gains `sudo` on `secret/data/registry/svc-orchestrator`',
      'deny jwt/registry-ci: gains `deny` on `secret/data/registry/svc-executor`',
    ]);
    const back = await diff(head, BASE);
    expect(flagsOf(back)).toEqual([
      'sudo jwt/registry-ci: loses `sudo` on `secret/data/registry/svc-orchestrator`',
      'deny jwt/registry-ci: loses `deny` on `secret/data/registry/svc-executor`',
    ]);
  });

  it('bindings loosened: audience added, bound claim dropped, uses unlimited, Secret ID not required', async () => {
    const head = variant(({ ci, apps }) => {
      const role = registryCiRole(ci);
      role.bound_audiences = ['https://gitlab.acme.example', 'https://other.example'];
      role.bound_claims = {};
      const app = apps.resource.vault_approle_auth_backend_role.audit_role_1A2B3C4D;
      app.bind_secret_id = false;
      app.secret_id_num_uses = 0;
    });
    const base = variant(({ apps }) => {
      apps.resource.vault_approle_auth_backend_role.audit_role_1A2B3C4D.secret_id_num_uses = 5;
    });
    expect(flagsOf(await diff(base, head))).toEqual([
      'binding-loosened approle/audit-agent: `bind_secret_id` true → false',
      'binding-loosened approle/audit-agent: `secret_id_num_uses` 5 → 0 (unlimited)',
      'binding-loosened jwt/registry-ci: `bound_audiences` https://gitlab.acme.example → https://gitlab.acme.example, https://other.example',
      'binding-loosened jwt/registry-ci: `bound_claims` namespace_path: acme | acme/* → (unset)',
    ]);
  });

  it('a Secret ID TTL going to 0 (no expiry) is a raise; lowering a TTL is not flagged', async () => {
    const head = variant(({ ci, apps }) => {
      apps.resource.vault_approle_auth_backend_role.audit_role_1A2B3C4D.secret_id_ttl = 0;
      registryCiRole(ci).token_ttl = 600;
    });
    const d = await diff(BASE, head);
    expect(flagsOf(d)).toEqual(['ttl-raised approle/audit-agent: `secret_id_ttl` 1h → 0 (no expiry)']);
    expect(d.changed.map((c) => c.name)).toEqual(['approle/audit-agent', 'jwt/registry-ci']);
  });

  it('detaching the default policy is one binding change, not seventeen rule changes', async () => {
    const d = await diff(BASE, variant(({ ci }) => (registryCiRole(ci).token_no_default_policy = true)));
    expect(d.changed).toEqual([
      {
        name: 'jwt/registry-ci',
        method: 'jwt',
        rules: [],
        bindings: [{ field: 'token_no_default_policy', before: false, after: true }],
      },
    ]);
  });

  it('an own rule merged with a default rule: removing it shows what the default rule leaves', async () => {
    const base = variant(({ ci }) => {
      registryCiPolicy(ci).policy += '\npath "cubbyhole/*" {\n  capabilities = ["deny"]\n}\n';
    });
    const d = await diff(base, BASE);
    expect(d.changed[0].rules).toEqual([
      {
        path: 'cubbyhole/*',
        kind: 'prefix',
        before: ['deny'],
        after: ['create', 'read', 'update', 'delete', 'list'],
        gained: ['create', 'read', 'update', 'delete', 'list'],
        lost: ['deny'],
        added: false,
        removed: false,
      },
    ]);
    expect(flagsOf(d)).toEqual(['deny jwt/registry-ci: loses `deny` on `cubbyhole/*`']);
  });

  it('an auth method mounted with no role yet is a login method added', async () => {
    const head = variant(({ apps }) => {
      apps.resource.vault_auth_backend.userpass = { type: 'userpass', path: 'people-local' };
    });
    const d = await diff(BASE, head);
    expect(d.flags).toEqual([
      { kind: 'login-method-added', identity: 'people-local/', identities: [], authMethod: 'people-local', message: 'new `userpass` auth method at `people-local/`; no role uses it yet' },
    ]);
    expect(renderAccessDiffMarkdown(d, { base: 'a', head: 'b' })).toContain('- **login method added**, auth method `people-local/`: new `userpass` auth method at `people-local/`; no role uses it yet');
  });

  it('a new identity with sudo is flagged', async () => {
    const head = variant(({ apps }) => {
      apps.resource.vault_approle_auth_backend_role.admin = {
        role_name: 'admin',
        token_policies: ['admin'],
      };
      apps.resource.vault_policy.admin = { name: 'admin', policy: 'path "sys/audit*" {\n  capabilities = ["update", "sudo"]\n}\n' };
    });
    expect(flagsOf(await diff(BASE, head))).toEqual(['sudo approle/admin: new identity has `sudo` on `sys/audit*`']);
  });
});

describe('access diff Markdown', () => {
  it('summary, risk flags, then tables of gained and lost capabilities and of bindings', async () => {
    const head = variant(({ ci }) => {
      registryCiRole(ci).token_ttl = 7200;
      registryCiPolicy(ci).policy = registryCiPolicy(ci).policy.replace(
        'path "secret/data/registry/svc-executor" {\n  capabilities = ["read"]',
        'path "secret/data/registry/svc-executor" {\n  capabilities = ["read", "update"]',
      );
    });
    const markdown = renderAccessDiffMarkdown(await diff(BASE, head), { base: 'main', head: 'feature' });
    expect(markdown).toBe(
      [
        '## Access changes: `main` → `feature`',
        '',
        '**Access changed:** 0 added, 0 removed, 1 changed, 5 unchanged. 1 risk flag.',
        '',
        '### Risk flags',
        '',
        '- **TTL raised**, `jwt/registry-ci`: `token_ttl` 1h → 2h',
        '',
        '### Changed: `jwt/registry-ci`',
        '',
        '| path | gained | lost | now |',
        '| --- | --- | --- | --- |',
        '| `secret/data/registry/svc-executor` | update |  | read, update |',
        '',
        '| binding | before | after |',
        '| --- | --- | --- |',
        '| token_ttl | 1h | 2h |',
        '',
      ].join('\n'),
    );
  });
});
