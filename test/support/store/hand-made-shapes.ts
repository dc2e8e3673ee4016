/**
 * Store shapes operators make by hand that the first adoption fixture (hand-made-platform.ts) does
 * not: one function per shape, HTTP calls with the root token on a fresh store, following the
 * synthesized declarations for names. Used by test/store/adoption-shapes.store.test.ts, one
 * scenario per shape.
 */
import { DeclaredObject, readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { RunningStore, storeRequest } from './store-server';

async function ok(store: RunningStore, method: string, apiPath: string, body?: unknown): Promise<any> {
  const res = await storeRequest(store, method, apiPath, body);
  if (res.status >= 300) throw new Error(`${method} ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
  return res.body;
}

const find = (outdir: string, stack: string, test: (o: DeclaredObject) => boolean) => readDeclaredObjects(outdir, stack).filter(test);

/**
 * Shape "tuned AppRole mount": `approle/` enabled with its own description and a default lease TTL
 * of 1 h (`bao auth enable -description=hand-made -default-lease-ttl=1h approle`), and every declared
 * AppRole role on it. Returns the Role ID of each role.
 */
export async function tunedAppRoleMount(store: RunningStore, outdir: string): Promise<Record<string, string>> {
  await ok(store, 'POST', 'sys/auth/approle', { type: 'approle', description: 'hand-made', config: { default_lease_ttl: '1h' } });
  const roleIds: Record<string, string> = {};
  for (const o of find(outdir, 'app-roles', (d) => d.kind === 'approle-role')) {
    await ok(store, 'POST', `auth/approle/role/${o.name}`, { token_policies: o.fields.token_policies, token_ttl: o.fields.token_ttl, token_max_ttl: o.fields.token_max_ttl, token_type: o.fields.token_type });
    roleIds[o.name] = (await ok(store, 'GET', `auth/approle/role/${o.name}/role-id`)).data.role_id;
  }
  return roleIds;
}

/**
 * Shape "OIDC registry-ci": `jwt/` configured as declared, and `registry-ci` made as an OIDC role
 * (for people logging in through a browser: `role_type=oidc`, a redirect URI) with the declared
 * bindings otherwise.
 */
export async function oidcRegistryCi(store: RunningStore, outdir: string, publicKeyPem: string): Promise<void> {
  const [mount] = find(outdir, 'ci-access', (d) => d.kind === 'jwt-auth-mount');
  await ok(store, 'POST', `sys/auth/${mount.name}`, { type: 'jwt' });
  await ok(store, 'POST', `auth/${mount.name}/config`, { bound_issuer: mount.fields.bound_issuer, jwt_validation_pubkeys: [publicKeyPem] });
  const [role] = find(outdir, 'ci-access', (d) => d.kind === 'jwt-role' && d.name === 'registry-ci');
  await ok(store, 'POST', `auth/${mount.name}/role/registry-ci`, {
    role_type: 'oidc',
    allowed_redirect_uris: ['https://people.example/oidc/callback'],
    user_claim: role.fields.user_claim,
    bound_audiences: role.fields.bound_audiences,
    token_policies: role.fields.token_policies,
  });
}
