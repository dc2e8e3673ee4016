/**
 * The spec's platform created BY HAND on a fresh store, as an operator would have done it before
 * adopting the library: HTTP calls with the root token, no engine, no state. It follows the
 * synthesized declarations for names and paths, with the differences a hand-made store has:
 * - `registry-ci`: other bound claims (one more namespace) and one more path in its policy;
 * - the four AppRole roles: other token TTLs (2 h / 48 h);
 * - policies written without the library's header comments (same access, other text);
 * - mounts without the library's descriptions;
 * - one unmanaged AppRole role `legacy-admin` with a broad policy (sudo on everything).
 */
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { RunningStore, storeRequest } from './store-server';

/** What the hand-made store differs in, and what a test needs to check adoption. */
export interface HandMadePlatform {
  /** Role IDs of the AppRole roles before adoption, by role name. */
  readonly roleIds: Record<string, string>;
  /** A Secret ID of `orchestrator-dev` provisioned before adoption (never printed). */
  readonly orchestratorSecretId: string;
  /** The path added by hand to `registry-ci`'s policy. */
  readonly extraCiPath: string;
  /** The namespace added by hand to `registry-ci`'s bound claims. */
  readonly extraNamespace: string;
  /** Names of the AppRole roles. */
  readonly appRoles: readonly string[];
}

/** Hand-made TTLs of the AppRole roles (the declarations have other ones). */
export const HAND_MADE_TTL = { token_ttl: 7200, token_max_ttl: 172800 } as const;

async function ok(store: RunningStore, method: string, apiPath: string, body?: unknown): Promise<any> {
  const res = await storeRequest(store, method, apiPath, body);
  if (res.status >= 300) throw new Error(`${method} ${apiPath}: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
  return res.body;
}

/** Without the library's comment lines: how an operator would have written the policy. */
function handWritten(text: string): string {
  return text
    .split('\n')
    .filter((l) => !l.startsWith('#'))
    .join('\n')
    .replace(/\n{2,}/g, '\n')
    .trimStart();
}

/**
 * Creates the platform of the synthesized output `outdir` by hand on `store`, with the
 * differences listed above, and provisions a Secret ID for `orchestrator-dev`.
 */
export async function createHandMadePlatform(store: RunningStore, outdir: string): Promise<HandMadePlatform> {
  const declared = readDeclaredObjects(outdir);
  const extraCiPath = 'secret/data/handmade/extra';
  const extraNamespace = 'legacy-group/*';
  for (const o of declared.filter((d) => d.kind === 'auth-mount' || d.kind === 'jwt-auth-mount')) {
    await ok(store, 'POST', `sys/auth/${o.name}`, { type: o.kind === 'jwt-auth-mount' ? 'jwt' : String(o.fields.type) });
    if (o.kind === 'jwt-auth-mount') {
      await ok(store, 'POST', `auth/${o.name}/config`, { bound_issuer: o.fields.bound_issuer, jwt_validation_pubkeys: o.fields.jwt_validation_pubkeys });
    }
  }
  for (const o of declared.filter((d) => d.kind === 'policy')) {
    let text = handWritten(String(o.fields.policy));
    if (o.name === 'registry-ci') text += `path "${extraCiPath}" {\n  capabilities = ["read"]\n}\n`;
    await ok(store, 'PUT', `sys/policies/acl/${o.name}`, { policy: text });
  }
  const appRoles: string[] = [];
  for (const o of declared.filter((d) => d.kind === 'jwt-role' || d.kind === 'approle-role')) {
    const f = o.fields;
    if (o.kind === 'jwt-role') {
      const claims = Object.fromEntries(Object.entries(f.bound_claims as Record<string, string>).map(([k, v]) => [k, [...String(v).split(','), extraNamespace]]));
      await ok(store, 'POST', `auth/${o.mount}/role/${o.name}`, {
        role_type: f.role_type,
        user_claim: f.user_claim,
        bound_audiences: f.bound_audiences,
        bound_claims_type: f.bound_claims_type,
        bound_claims: claims,
        token_policies: f.token_policies,
        token_ttl: f.token_ttl,
        token_max_ttl: f.token_max_ttl,
        token_explicit_max_ttl: f.token_explicit_max_ttl,
        token_type: f.token_type,
      });
    } else {
      appRoles.push(o.name);
      await ok(store, 'POST', `auth/${o.mount}/role/${o.name}`, { token_policies: f.token_policies, token_type: f.token_type, ...HAND_MADE_TTL });
    }
  }
  // The unmanaged role: someone's shortcut, with a policy that can do anything.
  await ok(store, 'PUT', 'sys/policies/acl/legacy-admin', { policy: 'path "*" {\n  capabilities = ["create", "read", "update", "delete", "list", "sudo"]\n}\n' });
  await ok(store, 'POST', 'auth/approle/role/legacy-admin', { token_policies: ['legacy-admin'] });

  const roleIds: Record<string, string> = {};
  for (const role of [...appRoles, 'legacy-admin']) roleIds[role] = (await ok(store, 'GET', `auth/approle/role/${role}/role-id`)).data.role_id;
  const orchestratorSecretId = (await ok(store, 'POST', 'auth/approle/role/orchestrator-dev/secret-id', {})).data.secret_id;
  return { roleIds, orchestratorSecretId, extraCiPath, extraNamespace, appRoles: appRoles.sort() };
}
