import { PolicyParser } from '../acl/policy-parser';
import { capabilityNames } from '../acl/store-capability';
import { comparableBindings } from '../access/access-diff';
import { AccessModel } from '../access/access-model';
import { storeConfigurationOf } from '../access/store-configuration';
import { readSynthOutput } from '../sources/synth-output';
import { AppliedConfiguration } from './approval-comparison';

/**
 * The configuration applied before this pipeline, as the approval comparison asks it: the base's
 * synthesis (the synth job's `cdktf.base.out/`, the commit before the push) read into the access
 * model. Read only when the comparison finds a difference, to tell drift (the store differs from it)
 * from a change of the configuration.
 */
export async function appliedConfiguration(baseOutdir: string): Promise<AppliedConfiguration> {
  const base = readSynthOutput(baseOutdir);
  const { overridden: _none, ...configuration } = storeConfigurationOf(base);
  const model = await AccessModel.load(configuration, new PolicyParser());
  return {
    capabilities(identity, kind, path) {
      const access = model.get(identity);
      const rule = access?.acl.rules.find((r) => r.path.kind === kind && r.path.display === path);
      if (rule === undefined || model.isBuiltinDefaultOnly(rule, access?.identity.namespace)) return [];
      return capabilityNames(rule.mask);
    },
    binding(identity, field) {
      const access = model.get(identity);
      return access === undefined ? null : (comparableBindings(access)[field] ?? null);
    },
  };
}
