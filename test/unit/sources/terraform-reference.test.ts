import { ReferenceResolver } from '../../../lib/sources/terraform-reference';

/** A stack as the synthesized output has it: a mount without a path, a policy, and references to both. */
const resolver = new ReferenceResolver({
  name: 'extra',
  file: 'extra/cdk.tf.json',
  metadata: {},
  namespace: '',
  resources: {
    vault_auth_backend: { m: { type: 'approle' } },
    vault_jwt_auth_backend: { j: { type: 'oidc' } },
    vault_policy: { p: { name: 'team-a', policy: '' } },
  },
});

describe('references resolved offline: attributes the provider derives come from the catalogue', () => {
  it("a mount's path defaults to its type (vault_auth_backend) or to jwt (vault_jwt_auth_backend)", () => {
    expect(resolver.resolve('${vault_auth_backend.m.path}', 'role.backend')).toBe('approle');
    expect(resolver.resolve('${vault_jwt_auth_backend.j.path}', 'role.backend')).toBe('jwt');
  });

  it("a policy's id is its name", () => {
    expect(resolver.resolve('${vault_policy.p.id}', 'role.token_policies')).toBe('team-a');
  });

  it('an attribute known only after apply is refused, naming it', () => {
    expect(() => resolver.resolve('${vault_auth_backend.m.accessor}', 'x')).toThrow(/has no configured "accessor" \(a value computed at apply time\)/);
  });
});
