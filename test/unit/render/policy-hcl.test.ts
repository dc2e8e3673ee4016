import { PolicyDocument } from '../../../lib';
import { renderPolicyHcl } from '../../../lib/render/policy-hcl';

describe('policy HCL: the policy document in the store\'s syntax, the same bytes for the same declarations', () => {
  it('renders the same bytes whatever the order of grants', () => {
    const one = new PolicyDocument('p');
    one.addRule('secret/data/a', ['read'], 's1');
    one.addRule('secret/data/b', ['read', 'list'], 's2');
    const two = new PolicyDocument('p');
    two.addRule('secret/data/b', ['list'], 's2');
    two.addRule('secret/data/a', ['read'], 's1');
    two.addRule('secret/data/b', ['read'], 's2');
    expect(renderPolicyHcl(two)).toBe(renderPolicyHcl(one));
  });

  it('renders a header, then HCL rule blocks sorted by path with their sources as comments', () => {
    const doc = new PolicyDocument('registry-ci');
    doc.addRule('secret/data/registry/svc-orchestrator', ['read'], 'ci-access/svc-orchestrator');
    doc.addRule('secret/data/registry/svc-executor', ['read', 'list'], 'ci-access/svc-executor');
    doc.addRule('secret/data/registry/svc-executor', ['read'], 'ci-access/other');
    expect(renderPolicyHcl(doc)).toBe(
      [
        '# Policy "registry-ci", managed by secretstore-iac. Do not edit in the store.',
        '',
        '# ci-access/other',
        '# ci-access/svc-executor',
        'path "secret/data/registry/svc-executor" {',
        '  capabilities = ["read", "list"]',
        '}',
        '',
        '# ci-access/svc-orchestrator',
        'path "secret/data/registry/svc-orchestrator" {',
        '  capabilities = ["read"]',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('refuses an empty policy: it is never emitted', () => {
    expect(() => renderPolicyHcl(new PolicyDocument('empty'))).toThrow('policy "empty" has no rules; an empty policy is never emitted');
  });
});
