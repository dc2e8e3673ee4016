import * as fs from 'fs';
import * as path from 'path';
import { pipelineGrantPolicyName } from '../model/pipeline-grant-name';
import { declaredPipelineGrants } from '../reconcile/pipeline-grants';
import { readSynthOutput, SynthStack } from '../sources/synth-output';

/** Resource blocks by type and id, as a `cdk.tf.json` or moves' override holds them. */
export type ResourceBlocks = Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, unknown>>>>>>;

/**
 * What a release is checked against, derived from the synthesis, never from the override alone.
 */
export interface ReleaseBasis {
  /** The stack's own declared resources: its synthesized `cdk.tf.json`'s `resource` (after every override). */
  readonly declared: ResourceBlocks;
  /**
   * Whether a policy name is the configuration pipeline roles' grant of a stack the synthesis no
   * longer has (`<pipeline role>-<retired stack>`): the only names a release takes away.
   */
  readonly isRetiredGrant: (policyName: string) => boolean;
}

/** The kept rule blocks `moves` appends to a policy text: a comment line, then one `path "sys/policies/acl/<name>"` block. */
const KEPT_RULE = /^\n(# [^\n]*)\n(path "sys\/policies\/acl\/([^"\n]+)" \{\n {2}capabilities = \[([^\]\n]*)\]\n\})\n/;

/**
 * The text the engine makes of a Terraform JSON string: `$${` and `%%{` are the literal `${` and
 * `%{`; undefined when it holds a template (`${...}`, `%{...}`), whose value only the engine knows.
 */
export function literalText(value: string): string | undefined {
  let template = false;
  const text = value.replace(/([$%])(\1?)\{/g, (_m, intro: string, doubled: string) => {
    if (doubled === '') template = true;
    return `${intro}{`;
  });
  return template ? undefined : text;
}

/**
 * The rules the kept text `was` has beyond the declared text `own` (`path "..." [caps]`), or why it
 * is not exactly `own` followed by moves' kept blocks on retired stacks' grants.
 */
export function keptRules(was: string, own: string, basis: ReleaseBasis): string[] | string {
  if (!was.startsWith(own)) return 'the kept text does not begin with the declared text';
  const rules: string[] = [];
  let rest = was.slice(own.length);
  while (rest !== '') {
    const m = KEPT_RULE.exec(rest);
    if (m === null) return `the kept text holds more than the declared text and moves' blocks on retired stacks' grants (at ${JSON.stringify(rest.slice(0, 40))})`;
    if (!basis.isRetiredGrant(m[3])) return `the kept rule on sys/policies/acl/${m[3]} is not on a grant of a retired stack`;
    rules.push(`sys/policies/acl/${m[3]} [${m[4]}]`);
    rest = rest.slice(m[0].length);
  }
  return rules;
}

/**
 * What a release of `stackDir` is checked against, from the synthesized output it is in: the stack's
 * own `cdk.tf.json` resources, and the grant names of the stacks the output no longer has (each
 * pipeline role HEAD declares, `<its role name>-<a stack HEAD does not have>`).
 * @param head the output, when read already
 * @throws Error naming the file when the stack directory has no readable `cdk.tf.json`
 */
export function releaseBasis(stackDir: string, head: readonly SynthStack[] = readSynthOutput(path.dirname(path.dirname(stackDir)))): ReleaseBasis {
  const file = path.join(stackDir, 'cdk.tf.json');
  let declared: ResourceBlocks;
  try {
    declared = ((JSON.parse(fs.readFileSync(file, 'utf8')) as { resource?: ResourceBlocks } | null)?.resource ?? {}) as ResourceBlocks;
  } catch (e) {
    throw new Error(`${file}: not the stack's synthesized configuration (${(e as Error).message}): no declared value to release to`);
  }
  const stacks = new Set(head.map((s) => s.name));
  const roles = [...new Set(declaredPipelineGrants(head).map((g) => g.role))];
  return {
    declared,
    isRetiredGrant: (name) =>
      roles.some((role) => {
        const stack = name.slice(role.length + 1);
        return name === pipelineGrantPolicyName(role, stack) && /^[A-Za-z0-9_-]+$/.test(stack) && !stacks.has(stack);
      }),
  };
}
