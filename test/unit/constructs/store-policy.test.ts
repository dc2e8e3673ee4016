import { Testing } from 'cdktf';
import { StorePolicy } from '../../../lib';

describe('StorePolicy: a PolicyDocument rendered as the store\'s policy resource', () => {
  it('renders the name and the HCL of the document as it is at synthesis, grants made later included', () => {
    const synthesized = JSON.parse(
      Testing.synthScope((scope) => {
        const policy = new StorePolicy(scope, 'policy', { name: 'billing-dev' });
        policy.document.addRule('secret/data/acme/dev/billing/*', ['read'], 'test/after-creation');
      }),
    );
    const resources = Object.values(synthesized.resource.vault_policy) as { name: string; policy: string }[];
    expect(resources).toHaveLength(1);
    expect(resources[0].name).toBe('billing-dev');
    expect(resources[0].policy).toContain('# test/after-creation\npath "secret/data/acme/dev/billing/*" {\n  capabilities = ["read"]\n}\n');
  });

  it('an empty document is refused at synthesis, never emitted', () => {
    expect(() => Testing.synthScope((scope) => new StorePolicy(scope, 'policy', { name: 'p' }))).toThrow(
      'policy "p" has no rules; an empty policy is never emitted',
    );
  });

  it('is the resource itself, so the resource keeps the construct path its owner gives it', () => {
    Testing.synthScope((scope) => {
      const policy = new StorePolicy(scope, 'policy', { name: 'p' });
      policy.document.addRule('secret/data/a', ['read'], 'test');
      expect(policy.document.name).toBe('p');
      expect(policy.node.path.endsWith('/policy')).toBe(true);
      expect(policy.node.children).toEqual([]);
    });
  });

  it('its text comes from the document only: reading the input renders it, setting the text is refused with the way to do it', () => {
    Testing.synthScope((scope) => {
      const policy = new StorePolicy(scope, 'policy', { name: 'p' });
      policy.document.addRule('secret/data/a', ['read'], 'test/grant');
      expect(policy.policyInput).toContain('path "secret/data/a" {\n  capabilities = ["read"]\n}');
      expect(policy.policy).toMatch(/^\$\{TfToken\[TOKEN\.\d+\]\}$/);
      expect(() => {
        policy.policy = 'path "secret/*" { capabilities = ["read"] }';
      }).toThrow(/policy is rendered from its document at synthesis; add rules to document \(a grant\) instead of setting the text/);
    });
  });
});
