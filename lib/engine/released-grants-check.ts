import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { RETIRED_GRANTS_FILE } from '../model/retired-grants-file';
import { sealedDigest } from './bookkeeping-seal';
import { runEngineCollected } from './engine-output';
import { ReleasedAccess } from '../model/released-access';
import { GuardRefusal } from './guard-refusal';
import { keptRules, literalText, ReleaseBasis, releaseBasis, ResourceBlocks } from './release-basis';

export { ReleaseBasis, releaseBasis } from './release-basis';
export { ReleasedAccess } from '../model/released-access';

/**
 * Thrown when `tf --released-grants FILE -- apply PLANFILE` is asked to apply a plan that does more
 * than end what `moves`' override kept (FILE), or FILE is not the override `moves` sealed in the
 * stack directory. The CLI exits 4 (refused, nothing applied).
 */
export class ReleasedGrantsRefused extends GuardRefusal {
  constructor(stack: string, problems: readonly string[]) {
    super(
      `${stack}: nothing applied: the plan is not only the end of the retired stacks' grants its roles kept (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n  ${problems.join('\n  ')}\n` +
        'Fix: apply the stack\'s reviewed plan of a pipeline instead; this apply only takes the kept grants away once the retired stacks\' removal is applied',
    );
    this.name = 'ReleasedGrantsRefused';
  }
}

/** One resource change of a saved plan, as `show -json` writes it. */
interface ResourceChange {
  readonly address?: string;
  readonly type?: string;
  readonly name?: string;
  readonly change?: { readonly actions?: readonly string[]; readonly before?: Record<string, unknown> | null; readonly after?: Record<string, unknown> | null };
}

/**
 * What in a saved plan is not exactly the release of kept grants: the plan may only update, in
 * place, the attributes `moves`' override (`kept`) set, each from the override's value (what the
 * store holds) to exactly the stack's own declared value (`basis.declared`, the synthesis): a token
 * policy list equal, as a set, to the declared one, the kept list minus exactly the retired stacks'
 * grant names; a policy text equal to the declared text, the kept text minus exactly the rule blocks
 * moves appended on retired stacks' grants. A prefix of the text, a subset of the list, a removal of
 * anything else, any other change, create, destroy or attribute is a problem.
 * @returns the problems, one line each (empty when the plan is exactly such a release), and what the
 *   release takes away, as access changes, when there is no problem
 */
export function releasedGrantsProblems(
  plan: { readonly resource_changes?: readonly ResourceChange[] },
  kept: { readonly resource?: ResourceBlocks },
  basis: ReleaseBasis,
): { readonly problems: string[]; readonly released: ReleasedAccess[] } {
  const problems: string[] = [];
  const released: ReleasedAccess[] = [];
  // The override and the stack name a role's own policy by reference (`${vault_policy.<id>.name}`):
  // resolved with the plan's values of that object (a name does not change in a release).
  const values = new Map((plan.resource_changes ?? []).map((rc) => [`${rc.type}.${rc.name}`, rc.change?.before ?? rc.change?.after ?? {}]));
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (typeof value !== 'string') return value;
    const ref = /^\$\{([a-z0-9_]+\.[^.{}]+)\.([a-z0-9_]+)\}$/.exec(value);
    if (ref) {
      const target = values.get(ref[1])?.[ref[2]];
      return typeof target === 'string' ? target : undefined;
    }
    return literalText(value);
  };
  for (const rc of plan.resource_changes ?? []) {
    const actions = rc.change?.actions ?? [];
    if (actions.length === 1 && actions[0] === 'no-op') continue;
    const address = rc.address ?? `${rc.type}.${rc.name}`;
    const override = rc.type !== undefined && rc.name !== undefined ? kept.resource?.[rc.type]?.[rc.name] : undefined;
    const declared = rc.type !== undefined && rc.name !== undefined ? basis.declared[rc.type]?.[rc.name] : undefined;
    if (override === undefined || declared === undefined) {
      problems.push(`${address}: ${actions.join(', ')}: not an object ${override === undefined ? 'whose grants moves kept' : 'the stack declares'}`);
      continue;
    }
    if (actions.length !== 1 || actions[0] !== 'update') {
      problems.push(`${address}: ${actions.join(', ')}: a release only updates in place`);
      continue;
    }
    const before = rc.change?.before ?? {};
    const after = rc.change?.after ?? {};
    const name = typeof before.role_name === 'string' ? before.role_name : typeof before.name === 'string' ? before.name : address;
    for (const key of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
      const same = JSON.stringify(before[key]) === JSON.stringify(after[key]);
      if (!(key in override)) {
        if (!same) problems.push(`${address}: changes ${key}, which moves did not keep`);
        continue;
      }
      const was = resolve(override[key]);
      const own = resolve(declared[key]);
      if (!sameValue(before[key], was)) {
        problems.push(`${address}: ${key} on the store is not what moves kept`);
      } else if (!sameValue(after[key], own)) {
        problems.push(`${address}: ${key} becomes other than the stack declares (${describe(after[key])}, declared ${describe(own)}): a release ends at exactly the declared value`);
      } else if (Array.isArray(was) && Array.isArray(own)) {
        const lost = was.filter((v) => !own.some((o) => JSON.stringify(o) === JSON.stringify(v)));
        const other = lost.filter((v) => typeof v !== 'string' || !basis.isRetiredGrant(v));
        if (other.length > 0) problems.push(`${address}: ${key} loses ${other.map(describe).join(', ')}: not a grant of a retired stack`);
        else lost.forEach((v) => released.push({ address, name, loses: 'policy', what: v as string }));
      } else if (typeof was === 'string' && typeof own === 'string') {
        const rules = keptRules(was, own, basis);
        if (typeof rules === 'string') problems.push(`${address}: ${key}: ${rules}`);
        else rules.forEach((what) => released.push({ address, name, loses: 'rule', what }));
      } else {
        problems.push(`${address}: ${key} is neither a list nor a text: not what moves keeps`);
      }
    }
  }
  return { problems, released: problems.length > 0 ? [] : released };
}

/** A value for a message: a list's items, a text's length. */
function describe(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => JSON.stringify(v)).join(', ')}]`;
  if (typeof value === 'string') return value.length > 40 ? `a text of ${value.length} characters` : JSON.stringify(value);
  return value === undefined ? 'a value only the engine knows' : JSON.stringify(value);
}

/** Equal values, lists compared as sets (the provider keeps token policies as a set, in its own order). */
function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    const key = (list: unknown[]) => [...new Set(list.map((v) => JSON.stringify(v)))].sort().join('\n');
    return a.length === b.length && key(a) === key(b);
  }
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The release as access changes, one line each, for the job log (and a note): which role loses which
 * policy, which policy loses which rule.
 */
export function renderReleasedAccess(stack: string, released: readonly ReleasedAccess[]): string[] {
  return released.map((r) =>
    r.loses === 'policy'
      ? `${stack}: access change: role ${r.name} (${r.address}) loses policy ${r.what} (a retired stack's grant)`
      : `${stack}: access change: policy ${r.name} (${r.address}) loses rule ${r.what} (on a retired stack's grant)`,
  );
}

/**
 * Refuses, before the engine applies `planFile` in `stackDir`, anything but the release of the
 * grants `moves`' override kept: `keptFile` must be that override, as sealed in the stack directory
 * (taken out of it so that the plan declares the stack without it), and the plan must do no more than
 * {@link releasedGrantsProblems} allows against the stack's synthesis ({@link releaseBasis}).
 * @returns what the release takes away, as access changes ({@link renderReleasedAccess})
 * @throws ReleasedGrantsRefused (exit 4) naming every problem
 */
export function checkReleasedGrants(stack: string, stackDir: string, planFile: string, keptFile: string, engine: string, env: NodeJS.ProcessEnv): ReleasedAccess[] {
  const content = fs.readFileSync(keptFile);
  const sealed = sealedDigest(stackDir, RETIRED_GRANTS_FILE);
  if (sealed === undefined || sealed !== createHash('sha256').update(content).digest('hex')) {
    throw new ReleasedGrantsRefused(stack, [`${keptFile}: not the ${RETIRED_GRANTS_FILE} secretstore-iac moves sealed in ${stackDir}`]);
  }
  if (fs.existsSync(path.join(stackDir, RETIRED_GRANTS_FILE))) {
    throw new ReleasedGrantsRefused(stack, [`${RETIRED_GRANTS_FILE} is still in ${stackDir}: the plan would keep the grants; take it out before planning`]);
  }
  const shown = runEngineCollected(engine, ['show', '-json', planFile], stackDir, env, { readsConfiguration: false });
  if (shown.status !== 0) throw new Error(`cannot read the plan ${planFile} (exit ${shown.status}): ${shown.said.split('\n')[0]}`);
  const { problems, released } = releasedGrantsProblems(JSON.parse(shown.stdout), JSON.parse(content.toString('utf8')), releaseBasis(stackDir));
  if (problems.length > 0) throw new ReleasedGrantsRefused(stack, problems);
  return released;
}
