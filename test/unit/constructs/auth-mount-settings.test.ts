import { Duration, SecretStoreValidationError } from '../../../lib';
import { READER_POLICY_RULES, readerPolicyRules } from '../../../lib/reconcile/live-store-reader';
import { StoreTarget } from '../../../lib/model/store-target';
import { platformConfig } from '../../support/platform-config';
import { policyRules, resources, synthesizePlatform } from '../../support/synthesized-platform';

// What the auth mounts and the reader's policy declare. Declaring nothing keeps the synthesized
// output as it was (checked byte for byte with `npm run synth` before and after; here: no tune block,
// the library's descriptions, no reader policy).

describe('auth mount settings (authMounts)', () => {
  it('declaring nothing: the library\'s descriptions, no tune block, no local, no reader policy', () => {
    const { stacks } = synthesizePlatform();
    const [approle] = resources(stacks['app-roles'], 'vault_auth_backend');
    const [jwt] = resources(stacks['ci-access'], 'vault_jwt_auth_backend');
    expect([approle.description, approle.tune, approle.local]).toEqual(['Application sidecar agents (managed by secretstore-iac)', undefined, undefined]);
    expect([jwt.description, jwt.tune, jwt.local]).toEqual(['CI job tokens (managed by secretstore-iac)', undefined, undefined]);
    expect(resources(stacks['ci-access'], 'vault_policy').map((p) => p.name)).not.toContain('secretstore-iac-reader');
  });

  it('description and tune declared: rendered as the provider\'s description and tune block (TTLs in seconds)', () => {
    const { stacks } = synthesizePlatform({
      ...platformConfig,
      authMounts: {
        approle: { description: 'hand', tune: { defaultLeaseTtl: Duration.hours(1), maxLeaseTtl: Duration.parse('24h'), listingVisibility: 'unauth', auditNonHmacRequestKeys: ['role'] } },
        jwt: { description: 'ci', tune: { tokenType: 'default-service' } },
      },
    });
    const [approle] = resources(stacks['app-roles'], 'vault_auth_backend');
    const [jwt] = resources(stacks['ci-access'], 'vault_jwt_auth_backend');
    expect(approle.description).toBe('hand');
    // Settings left out are null in the block: not declared.
    const set = (block: Record<string, unknown>) => Object.fromEntries(Object.entries(block).filter(([, v]) => v !== null));
    expect(approle.tune.map(set)).toEqual([{ default_lease_ttl: '3600s', max_lease_ttl: '86400s', listing_visibility: 'unauth', audit_non_hmac_request_keys: ['role'] }]);
    expect([jwt.description, jwt.tune.map(set)]).toEqual(['ci', [{ token_type: 'default-service' }]]);
  });

  it('bad settings: every problem at once, naming the construct and the field', () => {
    expect(() =>
      synthesizePlatform({
        ...platformConfig,
        authMounts: { approle: { description: 5 as any, tune: { defaultLeaseTtl: '1h' as any, tokenType: 'forever' as any } }, jwt: { tune: { maxLeaseTtl: Duration.parse('soon') } } },
      }),
    ).toThrow(SecretStoreValidationError);
    try {
      synthesizePlatform({
        ...platformConfig,
        authMounts: { approle: { description: 5 as any, tune: { defaultLeaseTtl: '1h' as any, tokenType: 'forever' as any } }, jwt: { tune: { maxLeaseTtl: Duration.parse('soon') } } },
      });
    } catch (e) {
      const text = String((e as Error).message);
      for (const field of ['description = 5', 'tune.defaultLeaseTtl', 'tune.tokenType', 'tune.maxLeaseTtl = "soon": is not a duration']) expect(text).toContain(field);
      expect(text).toMatch(/app-roles\/approle/);
      expect(text).toMatch(/ci-access\/jwt/);
    }
  });
});

describe('the reader\'s own policy (readerPolicy)', () => {
  it('true: a policy secretstore-iac-reader in ci-access with exactly the rules of READER_POLICY', () => {
    const { stacks } = synthesizePlatform({ ...platformConfig, readerPolicy: true });
    const policy = resources(stacks['ci-access'], 'vault_policy').find((p) => p.name === 'secretstore-iac-reader');
    expect(policyRules(policy.policy).sort()).toEqual(READER_POLICY_RULES.map((r) => [r.path, [...r.capabilities]]).sort());
  });

  it('written for settings.store: the newer LIST rule\'s role listing for OpenBao 2.6.0, the older one for 2.4.0', () => {
    const declared = (store: { kind: 'openbao' | 'vault'; version?: string }) => {
      const { stacks } = synthesizePlatform({ ...platformConfig, settings: { ...platformConfig.settings, store }, readerPolicy: true });
      return policyRules(resources(stacks['ci-access'], 'vault_policy').find((p) => p.name === 'secretstore-iac-reader').policy).sort();
    };
    const rulesOf = (target: StoreTarget) => readerPolicyRules(target).map((r) => [r.path, [...r.capabilities]]).sort();
    expect(declared({ kind: 'openbao', version: '2.6.0' })).toEqual(rulesOf(new StoreTarget('openbao', '2.6.0')));
    expect(declared({ kind: 'openbao', version: '2.6.0' })).toContainEqual(['auth/+/role/', ['list']]);
    expect(declared({ kind: 'openbao', version: '2.4.0' })).toEqual(rulesOf(new StoreTarget('openbao', '2.4.0')));
    expect(declared({ kind: 'openbao', version: '2.4.0' })).not.toContainEqual(['auth/+/role/', ['list']]);
    expect(declared({ kind: 'vault' })).toEqual(READER_POLICY_RULES.map((r) => [r.path, [...r.capabilities]]).sort());
  });

  it('{ name }: under that name; a built-in or malformed name is refused', () => {
    const { stacks } = synthesizePlatform({ ...platformConfig, readerPolicy: { name: 'drift-reader' } });
    expect(resources(stacks['ci-access'], 'vault_policy').map((p) => p.name)).toContain('drift-reader');
    expect(() => synthesizePlatform({ ...platformConfig, readerPolicy: { name: 'default' } })).toThrow(/reader-policy.*name.*built-in policy/s);
    expect(() => synthesizePlatform({ ...platformConfig, readerPolicy: { name: 'Reader/x' } })).toThrow(/reader-policy.*name/s);
    expect(() => synthesizePlatform({ ...platformConfig, readerPolicy: 'yes' as any })).toThrow(/readerPolicy/);
  });
});
