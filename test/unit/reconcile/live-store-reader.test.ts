import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as path from 'path';
import { AccessModel } from '../../../lib/access/access-model';
import { accessReport } from '../../../lib/access/access-report';
import {
  LiveStoreReadError,
  liveStoreConfiguration,
  parseAuthMounts,
  parseJwtConfig,
  parseList,
  parsePolicy,
  parseRole,
  readLiveStore,
} from '../../../lib/reconcile/live-store-reader';
import { DEFAULT_POLICY_TEXT } from '../../../lib/acl/default-policy';
import { StoreClient } from '../../../lib/store/store-client';
import { REPO_ROOT } from '../../support/paths';

// Response bodies captured from a real OpenBao 2.4.0 dev server (`bao server -dev`) with a
// hand-made registry-ci JWT role and an orchestrator-dev AppRole role; no token in any of them.
const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'live-store');
const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8'));

describe('parsing the store\'s answers', () => {
  it('GET sys/auth: type, path and accessor of every mount', () => {
    expect(parseAuthMounts(fixture('sys-auth')).map(({ path, type, accessor, description }) => ({ path, type, accessor, description }))).toEqual([
      { path: 'approle', type: 'approle', accessor: 'auth_approle_a3fe4a4f', description: '' },
      { path: 'jwt', type: 'jwt', accessor: 'auth_jwt_2f01f156', description: '' },
      { path: 'token', type: 'token', accessor: 'auth_token_2f8c653f', description: 'token based credentials' },
    ]);
  });

  it('GET sys/auth: local, seal_wrap and the tune settings as the store holds them (never tuned: 0 TTLs, default-service)', () => {
    // Recorded from OpenBao 2.4.0: `bao auth enable -local -seal-wrap -description=hand -default-lease-ttl=1h
    // -max-lease-ttl=24h -listing-visibility=unauth -audit-non-hmac-request-keys=role approle`, and `bao auth enable jwt`.
    const [approle, jwt] = parseAuthMounts(fixture('sys-auth-tuned'));
    expect(approle).toMatchObject({
      path: 'approle', description: 'hand', local: true, sealWrap: true,
      tune: { default_lease_ttl: 3600, max_lease_ttl: 86400, listing_visibility: 'unauth', token_type: 'default-service', audit_non_hmac_request_keys: ['role'], audit_non_hmac_response_keys: [] },
    });
    expect(jwt).toMatchObject({
      path: 'jwt', description: '', local: false, sealWrap: false,
      tune: { default_lease_ttl: 0, max_lease_ttl: 0, listing_visibility: '', token_type: 'default-service', audit_non_hmac_request_keys: [], audit_non_hmac_response_keys: [] },
    });
  });

  it('GET auth/jwt/config: issuer and key source, PEMs trimmed, unset fields empty', () => {
    const config = parseJwtConfig('jwt', fixture('jwt-config'));
    expect(config.fields.bound_issuer).toBe('https://gitlab.acme.example');
    expect(config.fields.oidc_discovery_url).toBe('');
    expect(config.fields.jwks_url).toBe('');
    expect(config.fields.jwt_supported_algs).toEqual([]);
    const keys = config.fields.jwt_validation_pubkeys as string[];
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----$/);
  });

  it('LIST answers: the keys, sorted', () => {
    expect(parseList(fixture('list-jwt-roles'), 'LIST auth/jwt/role')).toEqual(['registry-ci']);
    expect(parseList(fixture('list-approle-roles'), 'LIST auth/approle/role')).toEqual(['orchestrator-dev']);
    expect(parseList(fixture('list-policies'), 'LIST sys/policies/acl')).toEqual(['default', 'registry-ci', 'root']);
    expect(() => parseList({ data: {} }, 'LIST x')).toThrow('LIST x: the store\'s answer has no "keys" list');
  });

  it('GET sys/policies/acl/<name>: the text; root has an empty one; default is the built-in text', () => {
    expect(parsePolicy('registry-ci', fixture('policy-registry-ci'))).toBe(
      'path "secret/data/registry/svc-orchestrator" {\n  capabilities = ["read"]\n}\npath "secret/data/extra/*" {\n  capabilities = ["read", "list"]\n}\n',
    );
    expect(parsePolicy('root', fixture('policy-root'))).toBe('');
    expect(parsePolicy('default', fixture('policy-default'))).toBe(DEFAULT_POLICY_TEXT);
  });

  it('roles become identities with the same normalised bindings as declared ones', async () => {
    const store = {
      address: 'http://store',
      mounts: parseAuthMounts(fixture('sys-auth')),
      jwtConfigs: [parseJwtConfig('jwt', fixture('jwt-config'))],
      roles: [
        parseRole('approle', 'approle', 'orchestrator-dev', fixture('approle-role-orchestrator-dev')),
        parseRole('jwt', 'jwt', 'registry-ci', fixture('jwt-role-registry-ci')),
      ],
      policies: new Map([
        ['default', parsePolicy('default', fixture('policy-default'))],
        ['registry-ci', parsePolicy('registry-ci', fixture('policy-registry-ci'))],
        ['root', ''],
      ]),
    };
    const configuration = liveStoreConfiguration(store, 'live');
    expect([...configuration.policies.keys()]).toEqual(['registry-ci']);
    expect(configuration.identities.map((i) => [i.name, i.stack, i.tokenPolicies])).toEqual([
      ['approle/orchestrator-dev', 'live', ['orchestrator-dev']],
      ['jwt/registry-ci', 'live', ['registry-ci']],
    ]);
    expect(configuration.identities[0].bindings).toEqual({
      bind_secret_id: true,
      secret_id_num_uses: 0,
      secret_id_ttl: 0,
      token_explicit_max_ttl: 0,
      token_max_ttl: 172800,
      token_num_uses: 0,
      token_period: 0,
      token_ttl: 7200,
      token_type: 'service',
    });
    const { jwt_validation_pubkeys: keys, ...jwtBindings } = configuration.identities[1].bindings as Record<string, unknown>;
    // The method's key source is a binding of each of its roles, as for a declared role.
    expect(keys).toEqual([expect.stringMatching(/^-----BEGIN PUBLIC KEY-----\n[\s\S]*\n-----END PUBLIC KEY-----$/)]);
    expect(jwtBindings).toEqual({
      bound_audiences: ['https://gitlab.acme.example'],
      bound_claims: { namespace_path: ['acme', 'acme/*', 'other'] },
      bound_claims_type: 'glob',
      bound_issuer: 'https://gitlab.acme.example',
      role_type: 'jwt',
      token_explicit_max_ttl: 3600,
      token_max_ttl: 3600,
      token_num_uses: 0,
      token_period: 0,
      token_ttl: 3600,
      token_type: 'service',
      user_claim: 'project_path',
    });
    // The report works on it unchanged: the hand-made extra path is there.
    const report = accessReport(await AccessModel.load(configuration));
    const ci = report.identities.find((i) => i.name === 'jwt/registry-ci')!;
    expect(ci.rules.map((r) => `${r.path} ${r.capabilities.join(',')}`)).toEqual([
      'secret/data/extra/* read,list',
      'secret/data/registry/svc-orchestrator read',
    ]);
    expect(report.identities[0].problems).toEqual([
      // Read from the store: the policy is missing there, not "not declared".
      'policy "orchestrator-dev" is missing on the store; the store ignores a policy it does not have, so it grants nothing until it is written (a declared policy: apply its stack)',
    ]);
  });
});

describe('values read exactly as the store holds them (issue 15)', () => {
  const live = (boundClaims: unknown) => ({
    address: 'http://127.0.0.1:1',
    mounts: [],
    jwtConfigs: [],
    roles: [{ mount: 'jwt', method: 'jwt' as const, role: 'r', fields: { role_type: 'jwt', bound_claims: boundClaims, token_policies: [] } }],
    policies: new Map<string, string>(),
  });

  it('a bound claim the store holds as one string with a comma is one value (the store matches it whole)', () => {
    const [role] = liveStoreConfiguration(live({ namespace_path: 'acme,acme/*' })).identities;
    expect(role.bindings.bound_claims).toEqual({ namespace_path: ['acme,acme/*'] });
  });

  it('a list the store holds is the list of alternatives', () => {
    const [role] = liveStoreConfiguration(live({ namespace_path: ['acme/*', 'acme'] })).identities;
    expect(role.bindings.bound_claims).toEqual({ namespace_path: ['acme', 'acme/*'] });
  });
});

describe('readLiveStore over HTTP', () => {
  // Serves the captured answers by method and path; anything else answers as the store does.
  async function serve(deny: string[] = []): Promise<{ client: StoreClient; close: () => Promise<void>; seen: string[] }> {
    const routes: Record<string, string> = {
      'GET /v1/sys/auth': 'sys-auth',
      'GET /v1/auth/jwt/config': 'jwt-config',
      'GET /v1/auth/jwt/role?list=true': 'list-jwt-roles',
      'GET /v1/auth/jwt/role/registry-ci': 'jwt-role-registry-ci',
      'GET /v1/auth/approle/role/orchestrator-dev': 'approle-role-orchestrator-dev',
      'GET /v1/sys/policies/acl?list=true': 'list-policies',
      'GET /v1/sys/policies/acl/registry-ci': 'policy-registry-ci',
      'GET /v1/sys/policies/acl/default': 'policy-default',
      'GET /v1/sys/policies/acl/root': 'policy-root',
      'GET /v1/auth/token/lookup-self': 'policy-root',
    };
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      const key = `${req.method} ${req.url}`;
      seen.push(key);
      res.setHeader('Content-Type', 'application/json');
      if (deny.includes(key)) {
        res.writeHead(403);
        res.end(JSON.stringify({ errors: ['1 error occurred:\n\t* permission denied\n\n'] }));
      } else if (routes[key]) {
        res.writeHead(200);
        res.end(JSON.stringify(fixture(routes[key])));
      } else {
        // An empty LIST, as the store answers it.
        res.writeHead(404);
        res.end('{"errors":[]}');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { client: new StoreClient({ address, token: 'reader' }), seen, close: () => new Promise((r) => server.close(() => r())) };
  }

  it('reads mounts, configs, roles and policies; an empty LIST (404, no errors) is no roles', async () => {
    const s = await serve();
    try {
      const store = await readLiveStore(s.client);
      expect(store.mounts.map((m) => m.path)).toEqual(['approle', 'jwt', 'token']);
      expect(store.roles.map((r) => `${r.mount}/${r.role}`)).toEqual(['jwt/registry-ci']);
      expect([...store.policies.keys()]).toEqual(['default', 'registry-ci', 'root']);
      expect(s.seen).toContain('GET /v1/auth/approle/role?list=true');
      expect(s.seen.every((k) => k.startsWith('GET '))).toBe(true);
    } finally {
      await s.close();
    }
  });

  it('a refused path fails with the path, the capability and where the policy is documented', async () => {
    const s = await serve(['GET /v1/sys/policies/acl?list=true']);
    try {
      const e = await readLiveStore(s.client).catch((x) => x);
      expect(e).toBeInstanceOf(LiveStoreReadError);
      expect(e.message).toMatch(/^cannot read the live store at http:\/\/127\.0\.0\.1:\d+: permission denied: LIST \/v1\/sys\/policies\/acl \(HTTP 403\): the token may not list sys\/policies\/acl\./);
      expect(e.message).toContain('least-privilege policy of docs/adoption.md');
    } finally {
      await s.close();
    }
  });
});
