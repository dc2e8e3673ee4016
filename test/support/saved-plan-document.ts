/**
 * Hand-written saved plans for unit tests, shaped as `tofu show -json PLANFILE` prints them
 * (OpenTofu 1.12.6; Terraform writes the same fields plus `applyable` and `complete`): format_version,
 * terraform_version, planned_values, resource_drift, resource_changes (address, mode, type, name,
 * provider_name, change {actions, before, after, after_unknown, before_sensitive, after_sensitive}),
 * prior_state, configuration, relevant_attributes, timestamp, errored. Unknown values are left out
 * of `after` and marked `true` in `after_unknown`, as the engine does.
 */
import { ReferenceResolver } from '../../lib/sources/terraform-reference';
import { SynthStack } from '../../lib/sources/synth-output';

/** One resource change as a test writes it. */
export interface ChangeSpec {
  readonly address: string;
  readonly actions: readonly string[];
  readonly before: Record<string, unknown> | null;
  readonly after: Record<string, unknown> | null;
  readonly afterUnknown?: Record<string, unknown>;
  readonly mode?: 'managed' | 'data';
  readonly actionReason?: string;
}

const PROVIDER = 'registry.opentofu.org/hashicorp/vault';

/** `type` and `name` of an address (`module.m.vault_policy.p["k"]` → `vault_policy`, `p`). */
function typeAndName(address: string): { type: string; name: string } {
  const parts = address.replace(/\[[^\]]*\]$/, '').split('.');
  return { type: parts[parts.length - 2], name: parts[parts.length - 1] };
}

/** The values the store (and state) holds for each resource of a synthesized stack once applied: references resolved, an `id`. */
export function appliedValues(stack: SynthStack): Map<string, Record<string, unknown>> {
  const resolver = new ReferenceResolver(stack);
  const out = new Map<string, Record<string, unknown>>();
  for (const [type, blocks] of Object.entries(stack.resources)) {
    for (const [name, block] of Object.entries(blocks)) {
      const values: Record<string, unknown> = { namespace: null };
      for (const [k, v] of Object.entries(block)) if (k !== '//') values[k] = resolver.resolve(v, `${type}.${name}.${k}`);
      values.id = type === 'vault_policy' ? values.name : `${type}/${name}`;
      out.set(`${type}.${name}`, values);
    }
  }
  return out;
}

/**
 * A `show -json` document of a plan of `stack`: every applied resource of the stack is a no-op
 * unless `changes` names its address; `changes` may add addresses the stack does not have.
 */
export function planDocument(stack: SynthStack | undefined, changes: readonly ChangeSpec[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  const applied = stack ? appliedValues(stack) : new Map<string, Record<string, unknown>>();
  const specs = new Map(changes.map((c) => [c.address, c]));
  for (const [address, values] of applied) {
    if (!specs.has(address)) specs.set(address, { address, actions: ['no-op'], before: values, after: values });
  }
  const resourceChanges = [...specs.values()]
    .sort((a, b) => (a.address < b.address ? -1 : 1))
    .map((c) => ({
      address: c.address,
      mode: c.mode ?? 'managed',
      ...typeAndName(c.address),
      provider_name: PROVIDER,
      change: {
        actions: [...c.actions],
        before: c.before,
        after: c.after,
        after_unknown: c.afterUnknown ?? {},
        before_sensitive: c.before === null ? false : {},
        after_sensitive: c.after === null ? false : {},
      },
      ...(c.actionReason ? { action_reason: c.actionReason } : {}),
    }));
  const stateResource = (address: string, values: Record<string, unknown>) => ({
    address,
    mode: 'managed',
    ...typeAndName(address),
    provider_name: PROVIDER,
    schema_version: 0,
    values,
    sensitive_values: {},
  });
  const prior = [...specs.values()].filter((c) => c.before !== null && (c.mode ?? 'managed') === 'managed');
  return {
    format_version: '1.2',
    terraform_version: '1.12.6',
    planned_values: { root_module: { resources: [...specs.values()].filter((c) => c.after !== null).map((c) => stateResource(c.address, c.after!)) } },
    resource_drift: [],
    resource_changes: resourceChanges,
    prior_state: { format_version: '1.0', terraform_version: '1.12.6', values: { root_module: { resources: prior.map((c) => stateResource(c.address, c.before!)) } } },
    configuration: { provider_config: { vault: { name: 'vault', full_name: PROVIDER } }, root_module: {} },
    relevant_attributes: [],
    timestamp: '2026-11-28T03:00:00Z',
    errored: false,
    ...extra,
  };
}
