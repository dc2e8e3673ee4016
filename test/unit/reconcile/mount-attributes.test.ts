import * as crypto from 'crypto';
import * as path from 'path';
import { planAdoption } from '../../../lib/reconcile/adoption-plan';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { detectDrift, DriftReport } from '../../../lib/reconcile/store-drift';
import { describeMountAttributeChange, mountAttributeChanges } from '../../../lib/reconcile/mount-attribute-changes';
import { renderDriftMarkdown } from '../../../lib/reconcile/drift-markdown';
import { diffAccess } from '../../../lib/access/access-diff';
import { AccessModel } from '../../../lib/access/access-model';
import { renderAccessDiffMarkdown } from '../../../lib/access/access-diff-markdown';
import { appliedLiveStore, AppliedStore } from '../../support/applied-live-store';
import { ACCESS_FIXTURES } from '../../support/paths';
import { StoreTarget } from '../../../lib/model/store-target';

// Mount settings, role_type and PEM keys in drift and adoption, on the base fixture against an
// in-memory store as an apply leaves it, then changed by hand. The same on a real store:
// test/store/adoption-shapes.store.test.ts.

const BASE = path.join(ACCESS_FIXTURES, 'base');
const declared = readDeclaredObjects(BASE);
const configuration = readStoreConfiguration(BASE);
const live = (edit?: (s: AppliedStore) => void) => appliedLiveStore(declared, edit);
const mount = (s: AppliedStore, p: string) => s.mounts.find((m) => m.path === p)!;
const details = (r: DriftReport, storePath: string) => r.findings.filter((f) => f.storePath === storePath).flatMap((f) => f.details);

/** A fresh RSA public key in PEM: two calls give two different keys with the same first line. */
const publicKeyPem = () => crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();

describe('drift covers mount settings', () => {
  it('as applied: no mount finding', async () => {
    const r = await detectDrift(declared, configuration, live());
    expect(r.findings.filter((f) => f.storePath.startsWith('sys/auth/'))).toEqual([]);
  });

  it('a description and a lease TTL changed by hand on approle/ are reported with what the apply does', async () => {
    const r = await detectDrift(declared, configuration, live((s) => {
      mount(s, 'approle').description = 'hand';
      mount(s, 'approle').tune = { ...mount(s, 'approle').tune, default_lease_ttl: 3600 };
    }));
    const finding = r.findings.find((f) => f.storePath === 'sys/auth/approle')!;
    expect(finding).toMatchObject({ kind: 'changed', summary: 'auth method approle/ settings differ' });
    expect(finding.identities).toContain('approle/orchestrator-dev');
    expect(finding.details).toEqual([
      expect.stringMatching(/^description: declared "[^"]*", store "hand": the apply changes it in place \(no replacement\); declare `authMounts.approle.description: "hand"`/),
      expect.stringMatching(/^tune.default_lease_ttl: declared 0 \(system default\), not declared, store 1h: not declared, so the apply keeps the store's value; declare `authMounts.approle.tune.defaultLeaseTtl: Duration.parse\('1h'\)`/),
    ]);
    expect(renderDriftMarkdown(r, 'https://store')).toContain('- `sys/auth/approle`: auth method approle/ settings differ');
  });

  it('a JWT mount\'s description: the apply does not change it (the provider writes it only when creating the mount)', async () => {
    const r = await detectDrift(declared, configuration, live((s) => (mount(s, 'jwt').description = 'hand')));
    expect(details(r, 'sys/auth/jwt')).toEqual([expect.stringMatching(/^description: declared "[^"]*", store "hand": the apply does not change it: .*set it back by hand \(`bao auth tune -description='[^']*' jwt\/`\), or declare `authMounts.jwt.description: "hand"`/)]);
  });

  it("the hand fixes name the live store's CLI: vault on Vault, bao on OpenBao or an unknown store", async () => {
    const onVault = await detectDrift(declared, configuration, live((s) => {
      mount(s, 'jwt').description = 'hand';
      mount(s, 'approle').tune = { ...mount(s, 'approle').tune, max_lease_ttl: 7200 };
      (s as { store?: StoreTarget }).store = new StoreTarget('vault', '1.21.1');
    }));
    const text = [...details(onVault, 'sys/auth/jwt'), ...details(onVault, 'sys/auth/approle')].join('\n');
    expect(text).toContain("`vault auth tune -description='' jwt/`");
    expect(text).toContain('reset it by hand (`vault auth tune -max-lease-ttl=0 approle/`)');
    expect(text).not.toMatch(/\bbao\b/);
    const onBao = await detectDrift(declared, configuration, live((s) => {
      mount(s, 'jwt').description = 'hand';
      (s as { store?: StoreTarget }).store = new StoreTarget('openbao', '2.4.0');
    }));
    expect(details(onBao, 'sys/auth/jwt').join('\n')).toContain("`bao auth tune -description='' jwt/`");
  });

  it('inside a namespace every hand command names it (run as written without it, it would act on the root namespace) (issue 37)', async () => {
    const r = await detectDrift(declared, configuration, live((s) => {
      mount(s, 'jwt').description = 'hand';
      mount(s, 'approle').tune = { ...mount(s, 'approle').tune, max_lease_ttl: 7200 };
      (s as { namespace?: string }).namespace = 'team-a';
    }));
    expect(details(r, 'sys/auth/jwt').join('\n')).toContain("`bao auth tune -namespace='team-a' -description='' jwt/`");
    expect(details(r, 'sys/auth/approle').join('\n')).toContain("`bao auth tune -namespace='team-a' -max-lease-ttl=0 approle/`");
    expect([...details(r, 'sys/auth/jwt'), ...details(r, 'sys/auth/approle')].filter((d) => /`bao /.test(d) && !d.includes("-namespace='team-a'"))).toEqual([]);
  });

  it("the people's OIDC mount: fixes name its own settings (people.local) or a hand command on oidc/, never CI's authMounts.jwt (issue 37)", () => {
    const oidc = {
      stack: 'people', address: 'vault_jwt_auth_backend.oidc', type: 'vault_jwt_auth_backend', kind: 'jwt-auth-mount' as const,
      storePath: 'sys/auth/oidc', importId: 'oidc', name: 'oidc',
      fields: { type: 'oidc', path: 'oidc', description: 'People through single sign-on (managed by secretstore-iac)' },
    };
    const changes = mountAttributeChanges(oidc, {
      path: 'oidc', type: 'oidc', accessor: 'auth_oidc_1', description: 'hand', local: true, sealWrap: false,
      tune: { default_lease_ttl: 0, max_lease_ttl: 7200, listing_visibility: 'hidden', token_type: 'default-service', audit_non_hmac_request_keys: [], audit_non_hmac_response_keys: [] },
    }, 'bao', { namespace: 'team-a' }).map(describeMountAttributeChange);
    expect(changes.join('\n')).not.toContain('authMounts');
    expect(changes).toEqual([
      expect.stringMatching(/^local: declared false, store true: .*Declare `people.local: true` \(OidcAuth `local`\)/),
      "description: declared \"People through single sign-on (managed by secretstore-iac)\", store \"hand\": the apply does not change it: the vault provider (5.9.0) writes a JWT mount's description only when it creates the mount; set it back by hand (`bao auth tune -namespace='team-a' -description='People through single sign-on (managed by secretstore-iac)' oidc/`); the configuration has no description setting for this mount (OidcAuth gives its own)",
      "tune.max_lease_ttl: declared 0 (system default), not declared, store 2h: not declared (OidcAuth takes no tune settings), so the apply keeps the store's value; reset it by hand (`bao auth tune -namespace='team-a' -max-lease-ttl=0 oidc/`)",
    ]);
  });

  it('a local mount on the store: a replacement, refused by the plan check, and the declaration that keeps it', async () => {
    const r = await detectDrift(declared, configuration, live((s) => (mount(s, 'jwt').local = true)));
    const finding = r.findings.find((f) => f.storePath === 'sys/auth/jwt')!;
    expect(finding.summary).toBe('auth method jwt/ settings differ (applying would replace the mount and every role under it: refused by the plan check)');
    expect(finding.details).toEqual([expect.stringMatching(/^local: declared false, store true: forces a replacement: .*refuse it \(exit 4\)\. Declare `authMounts.jwt.local: true` \(CiJwtAuth `local`\)/)]);
  });

  it('a declared tune setting that differs is changed in place; listing visibility unset equals hidden, token type unset equals default-service', () => {
    const o = declared.find((d) => d.type === 'vault_auth_backend')!;
    const base = live().mounts.find((m) => m.path === 'approle')!;
    const tuned = { ...o, fields: { ...o.fields, tune: [{ max_lease_ttl: '7200s', listing_visibility: 'hidden', token_type: 'default-service' }] } };
    // Being imported, the mount's TTL is read by the import: the apply changes it in place.
    expect(mountAttributeChanges(tuned, base, 'bao', { imported: true }).map((c) => [c.attribute, c.declared, c.store, c.effect])).toEqual([['tune.max_lease_ttl', '2h', '0 (system default)', 'in-place']]);
    // A listing visibility declared and changed on the store is read back: changed in place too.
    const unauth = { ...base, tune: { ...base.tune, listing_visibility: 'unauth' } };
    expect(mountAttributeChanges({ ...tuned, fields: { ...tuned.fields, tune: [{ listing_visibility: 'hidden' }] } }, unauth).map((c) => [c.attribute, c.effect])).toEqual([['tune.listing_visibility', 'in-place']]);
  });

  it('a declared TTL changed on the store of a mount in state is not changed back: the provider never reads its TTLs back; the fix sets it by hand or declares the store\'s (issue 27)', () => {
    const o = declared.find((d) => d.kind === 'auth-mount')!;
    const tuned = { ...o, fields: { ...o.fields, tune: [{ max_lease_ttl: '2h' }] } };
    const changed = { ...live().mounts.find((m) => m.path === 'approle')!, tune: { ...live().mounts.find((m) => m.path === 'approle')!.tune, max_lease_ttl: 10800 } };
    expect(mountAttributeChanges(tuned, changed, 'vault').map(describeMountAttributeChange)).toEqual([
      'tune.max_lease_ttl: declared 2h, store 3h: the apply does not change it: the vault provider (5.9.0) keeps the TTL it wrote in its state and never reads it back from the store; ' +
        "set it back by hand (`vault auth tune -max-lease-ttl=2h approle/`), or declare `authMounts.approle.tune.maxLeaseTtl: Duration.parse('3h')` to keep the store's (the next apply writes that same value once)",
    ]);
    expect(mountAttributeChanges(tuned, changed, 'vault')[0].effect).toBe('kept');
  });
});

describe('role_type other than jwt on the store', () => {
  it('adopt reports it as a risk (a replacement the plan check refuses, no declaration keeps it); drift says so too', async () => {
    const store = live((s) => {
      const role = s.roles.find((r) => r.role === 'registry-ci')!;
      role.fields = { ...role.fields, role_type: 'oidc', allowed_redirect_uris: ['https://people.example/cb'] };
    });
    const ci = declared.filter((o) => o.stack === 'ci-access');
    const plan = await planAdoption('ci-access', ci, configuration, store, new Set());
    expect(plan.risks).toEqual([
      expect.stringMatching(/^auth\/jwt\/role\/registry-ci \(vault_jwt_auth_backend_role\.\S+\): role_type: declared jwt, store oidc: forces a replacement: .*refuse it \(exit 4\)\. No declaration keeps it/),
    ]);
    const r = await detectDrift(declared, configuration, store);
    expect(details(r, 'auth/jwt/role/registry-ci')).toContainEqual(expect.stringMatching(/^role_type: declared jwt, store oidc: forces a replacement/));
  });

  it('the other direction: a JWT role on the store where a people\'s OIDC role is declared is named as such, with the fix that converges (issue 27)', async () => {
    const ci = declared.filter((o) => o.stack === 'ci-access').map((o) => (o.kind === 'jwt-role' ? { ...o, fields: { ...o.fields, role_type: 'oidc' } } : o));
    const plan = await planAdoption('ci-access', ci, configuration, live(), new Set());
    expect(plan.risks).toEqual([
      "auth/jwt/role/registry-ci (vault_jwt_auth_backend_role.registry-ci_role_BE46C026): role_type: declared oidc, store jwt: forces a replacement: applying would delete the store's role and create an OIDC role in its place; " +
        "adopt's plan check and `tf --refuse-replace` refuse it (exit 4). No declaration keeps it: the store's role is a JWT role (role_type jwt), the declared one is a people's OIDC role (single sign-on); " +
        "delete the store's role by hand if no CI job logs in with it, or rename the declared group",
    ]);
    expect(plan.risks.join('\n')).not.toContain('is an OIDC role');
  });

  it('a JWT role as declared: no risk', async () => {
    const plan = await planAdoption('ci-access', declared.filter((o) => o.stack === 'ci-access'), configuration, live(), new Set());
    expect(plan.risks).toEqual([]);
  });
});

describe('PEM keys are shown by fingerprint', () => {
  const [a, b] = [publicKeyPem(), publicKeyPem()];

  it('two different keys share their first 37 characters, and print differently in drift, the access diff and its risk flags', async () => {
    expect(a.slice(0, 37)).toBe(b.slice(0, 37));
    const withKey = (pem: string) => live((s) => (s.jwtConfigs[0].fields.jwt_validation_pubkeys = [pem.trim()]));
    const declaredA = { ...configuration, identities: configuration.identities.map((i) => (i.method === 'jwt' ? { ...i, bindings: { ...i.bindings, jwt_validation_pubkeys: [a.trim()] } } : i)) };
    const r = await detectDrift(declared, declaredA, withKey(b));
    const drift = renderDriftMarkdown(r, 'https://store');
    const line = drift.split('\n').find((l) => l.includes('jwt_validation_pubkeys: declared'))!;
    expect(line).toMatch(/^  - jwt_validation_pubkeys: declared \(none\), store PEM sha256:[0-9a-f]{16}$/);
    expect(drift).not.toContain('-----BEGIN');
    const fingerprintOf = async (pem: string) => {
      const d = await detectDrift(declared, configuration, withKey(pem));
      return d.findings.find((f) => f.storePath === 'auth/jwt/config')!.details.find((l) => l.startsWith('jwt_validation_pubkeys'))!;
    };
    expect(await fingerprintOf(a)).not.toBe(await fingerprintOf(b));
    // The access diff (and the adoption report, which is one) with its risk flags: a key swapped.
    const diff = diffAccess(await AccessModel.load(declaredA), await AccessModel.load({ ...configuration, identities: declaredA.identities.map((i) => (i.method === 'jwt' ? { ...i, bindings: { ...i.bindings, jwt_validation_pubkeys: [b.trim()] } } : i)) }));
    const md = renderAccessDiffMarkdown(diff, { base: 'a', head: 'b' });
    const fingerprints = [...md.matchAll(/PEM sha256:([0-9a-f]{16})/g)].map((m) => m[1]);
    expect(new Set(fingerprints).size).toBe(2);
    expect(md).not.toContain('-----BEGIN');
  });
});
