import * as path from 'path';
import { renderAccessDiffMarkdown } from '../../../lib/access/access-diff-markdown';
import { planAdoption } from '../../../lib/reconcile/adoption-plan';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { appliedLiveStore } from '../../support/applied-live-store';
import { ACCESS_FIXTURES } from '../../support/paths';

// The adoption plan and report on the base fixture against an in-memory store made by hand; the
// same on a real store, with the real engine and provider, is test/store/adoption.store.test.ts.

const BASE = path.join(ACCESS_FIXTURES, 'base');
const configuration = readStoreConfiguration(BASE);
const ci = readDeclaredObjects(BASE, 'ci-access');
const apps = readDeclaredObjects(BASE, 'app-roles');

describe('planAdoption', () => {
  it('a hand-made store: every object imported, the hand-made differences reported store → declarations', async () => {
    const live = appliedLiveStore([...ci, ...apps], (s) => {
      const role = s.roles.find((r) => r.role === 'registry-ci')!;
      role.fields = { ...role.fields, bound_claims: { namespace_path: ['acme', 'acme/*', 'legacy/*'] } };
      s.policies.set('registry-ci', `${s.policies.get('registry-ci')}\npath "secret/data/handmade" {\n  capabilities = ["read"]\n}\n`);
      s.roles.push({ mount: 'approle', method: 'approle', role: 'legacy-admin', fields: { token_policies: ['root-ish'] } });
    });
    const plan = await planAdoption('ci-access', ci, configuration, live, new Set());
    expect(plan.imports).toEqual([
      { to: 'vault_jwt_auth_backend.jwt_backend_B86C4D3E', id: 'jwt' },
      { to: 'vault_jwt_auth_backend_role.registry-ci_role_BE46C026', id: 'auth/jwt/role/registry-ci' },
      { to: 'vault_policy.registry-ci_policy_FD942459', id: 'registry-ci' },
    ]);
    expect(plan.creates).toEqual([]);
    expect(plan.conflicts).toEqual([]);
    // Only the stack's identity; the unmanaged role is not part of adopting this stack.
    expect(plan.access.added).toEqual([]);
    expect(plan.access.removed).toEqual([]);
    expect(plan.access.changed.map((c) => c.name)).toEqual(['jwt/registry-ci']);
    const md = renderAccessDiffMarkdown(plan.access, { base: 'store', head: 'declarations (ci-access)' });
    expect(md).toContain('| `secret/data/handmade` (gone) |  | read |  |');
    expect(md).toContain('| bound_claims | `namespace_path: acme \\| acme/* \\| legacy/*` | `namespace_path: acme \\| acme/*` |');
  });

  it('after an interrupted apply: what is in state is left alone, what is on the store imported, the rest created', async () => {
    const orchestrator = apps.find((o) => o.address.startsWith('vault_approle_auth_backend_role.orchestrator-dev'))!;
    const live = appliedLiveStore([...ci, ...apps], (s) => {
      s.roles = s.roles.filter((r) => r.role !== 'authentik-role');
    });
    const state = new Set(apps.filter((o) => o.kind === 'auth-mount' || o.kind === 'policy').map((o) => o.address));
    const plan = await planAdoption('app-roles', apps, configuration, live, state);
    expect(plan.inState).toBe(state.size);
    expect(plan.imports.map((b) => b.id)).toContain(orchestrator.importId);
    expect(plan.imports.map((b) => b.id)).not.toContain('auth/approle/role/authentik-role');
    expect(plan.creates.map((o) => o.storePath)).toEqual(['auth/approle/role/authentik-role']);
    expect(plan.imports.every((b) => b.id.startsWith('auth/approle/role/'))).toBe(true);
    expect(plan.access.changed).toEqual([]);
  });

  it('a mount of another type at the declared path is a conflict, not an import', async () => {
    const live = appliedLiveStore([...ci, ...apps], (s) => {
      s.mounts.find((m) => m.path === 'jwt')!.type = 'oidc';
    });
    const plan = await planAdoption('ci-access', ci, configuration, live, new Set());
    expect(plan.conflicts).toEqual([
      "vault_jwt_auth_backend.jwt_backend_B86C4D3E: jwt/ is a oidc method on the store where CI's JWT method (type jwt) is declared; an import cannot change a mount's type, " +
        "and applying would disable it with every role under it. Fix: declare CI's JWT method at another path (CiJwtAuth `path`), or, if no person logs in with the store's oidc method, " +
        'disable it by hand (`bao auth disable jwt`, or `vault auth disable jwt` on Vault) and run adopt again',
    ]);
    expect(plan.imports.map((b) => b.id)).toEqual(['auth/jwt/role/registry-ci', 'registry-ci']);
  });

  it('after a store lost mid-apply: a tainted object the store has is untainted (kept, updated in place), one it does not have is forgotten and created (issue 27)', async () => {
    const role = (name: string) => apps.find((o) => o.kind === 'approle-role' && o.name === name)!;
    const live = appliedLiveStore([...ci, ...apps], (s) => {
      s.roles = s.roles.filter((r) => r.role !== 'authentik-role');
    });
    const state = new Set(apps.map((o) => o.address));
    const tainted = new Set([role('orchestrator-dev').address, role('authentik-role').address, 'vault_policy.removed_1']);
    const plan = await planAdoption('app-roles', apps, configuration, live, state, undefined, tainted);
    expect(plan.untaints.map((o) => o.storePath)).toEqual(['auth/approle/role/orchestrator-dev']);
    expect(plan.forgets.map((o) => o.storePath)).toEqual(['auth/approle/role/authentik-role']);
    expect(plan.creates.map((o) => o.storePath)).toEqual(['auth/approle/role/authentik-role']);
    expect(plan.imports).toEqual([]);
    expect(plan.taintedUndeclared).toEqual(['vault_policy.removed_1']);
    expect(plan.conflicts).toEqual([]);
    // Without taints, nothing in state is touched.
    const clean = await planAdoption('app-roles', apps, configuration, live, state);
    expect([clean.untaints, clean.forgets, clean.creates]).toEqual([[], [], []]);
  });

  it('a JWT method in state that the store mounted but never configured (a first apply that failed on OIDC discovery) is named with its fix on the first run (issue 27)', async () => {
    const jwt = ci.find((o) => o.kind === 'jwt-auth-mount')!;
    const withDiscovery = ci.map((o) => (o === jwt ? { ...o, fields: { ...o.fields, oidc_discovery_url: 'https://idp.unreachable.example' } } : o));
    const live = appliedLiveStore(ci, (s) => {
      s.roles = [];
      s.jwtConfigs = [{ ...s.jwtConfigs[0], configured: false }];
    });
    // The failed apply recorded the mount (tainted) and nothing else.
    const plan = await planAdoption('ci-access', withDiscovery, configuration, live, new Set([jwt.address]), undefined, new Set([jwt.address]));
    expect(plan.conflicts).toEqual([
      `${jwt.address}: jwt/ is mounted but was never configured (GET auth/jwt/config: 404; an apply that failed after mounting it leaves it so), and the provider cannot import or keep a JWT method without its configuration. ` +
        'The store fetches the declared oidc_discovery_url itself (https://idp.unreachable.example/.well-known/openid-configuration) when the configuration is written: ' +
        'if the apply failed on it ("error checking oidc discovery URL"), make that URL reachable from the store, or declare the right one, first. ' +
        'It holds no role: disable it (bao auth disable jwt) and apply; nothing is lost',
    ]);
    expect(plan.untaints).toEqual([]);
    // The same when the state does not record it (the provider's refresh forgot it).
    const forgotten = await planAdoption('ci-access', withDiscovery, configuration, live, new Set());
    expect(forgotten.conflicts).toEqual(plan.conflicts);
  });
});
