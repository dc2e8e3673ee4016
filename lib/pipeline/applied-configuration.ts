import { PolicyParser } from '../acl/policy-parser';
import { capabilityNames } from '../acl/store-capability';
import { comparableBindings } from '../access/access-diff';
import { canonicalJson } from '../access/access-change-record';
import { AccessModel } from '../access/access-model';
import { storeConfigurationOf } from '../access/store-configuration';
import { readSynthOutput, SynthStack } from '../sources/synth-output';
import { AppliedConfiguration } from './approval-comparison';

/**
 * The configuration applied before this pipeline, as the approval comparison asks it: the base's
 * synthesis (the synth job's `cdktf.base.out/`, the commit before the push) read into the access
 * model, and its resources beside this commit's (`cdktf.out/`). Read only when the comparison finds a
 * difference, to tell drift (the store differs from it) from a change of the configuration.
 */
export async function appliedConfiguration(baseOutdir: string, headOutdir: string): Promise<AppliedConfiguration> {
  const base = readSynthOutput(baseOutdir);
  const head = readSynthOutput(headOutdir, base);
  const { overridden: _none, ...configuration } = storeConfigurationOf(base);
  const model = await AccessModel.load(configuration, new PolicyParser());
  const resource = (stacks: readonly SynthStack[], stack: string, address: string) => {
    const dot = address.indexOf('.');
    return stacks.find((s) => s.name === stack)?.resources[address.slice(0, dot)]?.[address.slice(dot + 1)];
  };
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
    sameDeclaration(stack, address) {
      const b = resource(base, stack, address);
      const h = resource(head, stack, address);
      if (b === undefined || h === undefined) return b === h ? undefined : false;
      return canonicalJson(b) === canonicalJson(h);
    },
  };
}
