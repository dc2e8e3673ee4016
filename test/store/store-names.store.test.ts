/**
 * The store facts the catalogue's name spaces rely on (lib/catalogue/, SSI-R1 and SSI-R2), on the
 * real store: two names the catalogue takes for one object are one object on the store, and two
 * names it keeps apart are two. Found here: JWT role names are lower-cased like AppRole ones (the
 * catalogue first kept them as given). Each case asks the catalogue entry whether the names are one
 * (`name(...).key` equal), then writes both on the store and reads what it holds.
 */
import { storeObjectKind } from '../../lib/catalogue/store-object-catalogue';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/store-facts';

const PROBE_POLICY = 'path "secret/data/names-probe" {\n  capabilities = ["read"]\n}\n';

describe(`names as ${storeKind()} compares them: what the catalogue's name spaces rely on`, () => {
  let store: RunningStore;

  beforeAll(async () => {
    store = await startStore();
    expect((await storeRequest(store, 'POST', 'sys/auth/names-approle', { type: 'approle' })).status).toBe(204);
    expect((await storeRequest(store, 'POST', 'sys/auth/names-jwt', { type: 'jwt' })).status).toBe(204);
  });

  afterAll(async () => {
    await store?.stop();
  });

  it('a policy written as " Registry-CI " is read back as registry-ci: the catalogue trims and lower-cases policy names', async () => {
    const policy = storeObjectKind('vault_policy')!;
    expect(policy.name({ name: ' Registry-CI ' }).key).toBe('registry-ci');
    expect([200, 204]).toContain((await storeRequest(store, 'PUT', 'sys/policies/acl/%20Registry-CI%20', { policy: PROBE_POLICY })).status);
    const names = (await storeRequest(store, 'LIST', 'sys/policies/acl')).body.data.keys as string[];
    expect(names.filter((n) => /registry-ci/i.test(n))).toEqual(['registry-ci']);
    const read = await storeRequest(store, 'GET', 'sys/policies/acl/registry-ci');
    expect([read.status, read.body.data.name]).toEqual([200, 'registry-ci']);
  });

  it('AppRole roles Billing-Dev and billing-dev are one role, as the catalogue says: the second write changes the first', async () => {
    const role = storeObjectKind('vault_approle_auth_backend_role')!;
    const one = role.name({ backend: 'names-approle', role_name: 'Billing-Dev' });
    const other = role.name({ backend: 'names-approle', role_name: 'billing-dev' });
    expect(one).toEqual(other);
    expect((await storeRequest(store, 'POST', 'auth/names-approle/role/Billing-Dev', { token_policies: ['first'], token_ttl: 60 })).status).toBe(204);
    expect((await storeRequest(store, 'POST', 'auth/names-approle/role/billing-dev', { token_policies: ['second'], token_ttl: 120 })).status).toBe(204);
    const names = (await storeRequest(store, 'LIST', 'auth/names-approle/role')).body.data.keys as string[];
    expect(names).toEqual(['billing-dev']);
    const read = await storeRequest(store, 'GET', 'auth/names-approle/role/Billing-Dev');
    expect([read.status, read.body.data.token_policies, read.body.data.token_ttl]).toEqual([200, ['second'], 120]);
  });

  it('JWT roles Admins and admins are one role, as the catalogue says: the second write changes the first', async () => {
    const role = storeObjectKind('vault_jwt_auth_backend_role')!;
    const oneOnTheCatalogue =
      role.name({ backend: 'names-jwt', role_name: 'Admins' }).key === role.name({ backend: 'names-jwt', role_name: 'admins' }).key;
    const write = (name: string, claim: string) =>
      storeRequest(store, 'POST', `auth/names-jwt/role/${name}`, { role_type: 'jwt', bound_audiences: ['names'], user_claim: claim, bound_claims: { namespace_path: 'acme' } });
    expect((await write('Admins', 'sub')).status).toBe(204);
    expect((await write('admins', 'email')).status).toBe(204);
    const names = ((await storeRequest(store, 'LIST', 'auth/names-jwt/role')).body.data.keys as string[]).sort();
    const upper = await storeRequest(store, 'GET', 'auth/names-jwt/role/Admins');
    const onStore = { names, upperUserClaim: upper.body.data?.user_claim };
    expect(onStore).toEqual(oneOnTheCatalogue ? { names: ['admins'], upperUserClaim: 'email' } : { names: ['Admins', 'admins'], upperUserClaim: 'sub' });
    // What the catalogue says, so that a change of the entry is a change of this test too: both stores
    // lower-case JWT role names (OpenBao 2.4.0 and Vault 1.21.1), as they do AppRole names.
    expect(oneOnTheCatalogue).toBe(true);
  });

  it('auth mounts at Names-Case and names-case are two mounts, as the catalogue says: paths are compared as given', async () => {
    const mount = storeObjectKind('vault_auth_backend')!;
    const oneOnTheCatalogue = mount.name({ type: 'approle', path: 'Names-Case' }).key === mount.name({ type: 'approle', path: '/names-case/' }).key;
    const first = await storeRequest(store, 'POST', 'sys/auth/Names-Case', { type: 'approle' });
    const second = await storeRequest(store, 'POST', 'sys/auth/names-case', { type: 'approle' });
    const listed = Object.keys((await storeRequest(store, 'GET', 'sys/auth')).body.data).filter((p) => /^names-case\/$/i.test(p)).sort();
    expect({ first: first.status, second: second.status, listed }).toEqual(
      oneOnTheCatalogue ? { first: 204, second: 400, listed: ['names-case/'] } : { first: 204, second: 204, listed: ['Names-Case/', 'names-case/'] },
    );
    expect(oneOnTheCatalogue).toBe(false);
  });
});
