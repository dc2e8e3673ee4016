// A real OpenID provider (the certified `oidc-provider` library) for the store tests, run as its own
// Node process because the library is an ES module. It listens on 127.0.0.1 (an OS-chosen port),
// serves discovery, keys and the authorization-code flow, and prints one JSON line {"issuer": ...}
// once ready. Its login is the library's development interaction (any password; the login name is the
// account); consent is granted by the provider itself for the one first-party client, as an
// organisation's identity provider does for its own applications.
//
// Configuration through the environment (never arguments, which `ps` shows):
//   OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URIS (JSON list), OIDC_ACCOUNTS (JSON {login: [groups]})
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const clientId = process.env.OIDC_CLIENT_ID;
const clientSecret = process.env.OIDC_CLIENT_SECRET;
const redirectUris = JSON.parse(process.env.OIDC_REDIRECT_URIS ?? '[]');
const accounts = JSON.parse(process.env.OIDC_ACCOUNTS ?? '{}');

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
const signingKey = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256', kid: 'test' };

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  claims: { openid: ['sub'], email: ['email'], profile: ['name'], groups: ['groups'] },
  // The groups claim in the ID token itself, as identity providers configured for the store do.
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => false },
  async findAccount(_ctx, id) {
    if (!Object.prototype.hasOwnProperty.call(accounts, id)) return undefined;
    return {
      accountId: id,
      claims: async () => ({ sub: id, email: `${id}@people.test`, name: id, groups: accounts[id] }),
    };
  },
  // First-party client: the grant of the requested scopes and claims is given without a consent page.
  async loadExistingGrant(ctx) {
    const existing = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (existing) return ctx.oidc.provider.Grant.find(existing);
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope(ctx.oidc.params.scope);
    await grant.save();
    return grant;
  },
});
provider.on('server_error', (_ctx, err) => process.stderr.write(`oidc-provider server_error: ${err.stack}\n`));
server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
