import type { PolicyDocument } from '../model/policy-document';
import { commentText, hclString } from './text-encoders';

/**
 * Renders a policy in the store's HCL syntax: a header naming the policy, then one
 * `path "..." { capabilities = [...] }` block per rule, sorted by path, each under a comment line per
 * declaration that asked for it. The same declarations always give the same bytes.
 * @throws Error when the policy is empty: an empty policy is never emitted
 */
export function renderPolicyHcl(policy: PolicyDocument): string {
  if (policy.isEmpty) {
    throw new Error(`policy "${policy.name}" has no rules; an empty policy is never emitted`);
  }
  const blocks = policy.rules.map((rule) => {
    const comments = rule.sources.map((s) => `# ${commentText(s)}`).join('\n');
    const caps = rule.capabilities.map((c) => hclString(c)).join(', ');
    return `${comments}\npath ${hclString(rule.path)} {\n  capabilities = [${caps}]\n}\n`;
  });
  return `# Policy "${commentText(policy.name)}", managed by secretstore-iac. Do not edit in the store.\n\n${blocks.join('\n')}`;
}
