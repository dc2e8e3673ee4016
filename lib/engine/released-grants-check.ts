import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { RETIRED_GRANTS_FILE } from '../model/retired-grants-file';
import { sealedDigest } from './bookkeeping-seal';
import { runEngineCollected } from './engine-output';
import { GuardRefusal } from './guard-refusal';

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
 * What in a saved plan is more than the release of kept grants: the plan may only update, in place,
 * the attributes `moves`' override (`kept`, its JSON) set, each from the override's value (what the
 * store holds) to a part of it (the stack's own, without what was added for the retired stacks: a
 * token policy list without the kept names, a policy text without the appended blocks): it only takes
 * away. Any other change, create, destroy, or attribute is a problem.
 * @returns one line per problem; empty when the plan is exactly such a release
 */
export function releasedGrantsProblems(plan: { readonly resource_changes?: readonly ResourceChange[] }, kept: { readonly resource?: Record<string, Record<string, Record<string, unknown>>> }): string[] {
  const problems: string[] = [];
  // The override names a role's own policy by reference (`${vault_policy.<id>.name}`), as the stack
  // does: resolved with the plan's values of that object (a name does not change in a release).
  const values = new Map((plan.resource_changes ?? []).map((rc) => [`${rc.type}.${rc.name}`, rc.change?.before ?? rc.change?.after ?? {}]));
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    const ref = typeof value === 'string' ? /^\$\{([a-z0-9_]+\.[^.{}]+)\.([a-z0-9_]+)\}$/.exec(value) : null;
    const target = ref ? values.get(ref[1])?.[ref[2]] : undefined;
    return typeof target === 'string' ? target : value;
  };
  for (const rc of plan.resource_changes ?? []) {
    const actions = rc.change?.actions ?? [];
    if (actions.length === 1 && actions[0] === 'no-op') continue;
    const address = rc.address ?? `${rc.type}.${rc.name}`;
    const override = rc.type !== undefined && rc.name !== undefined ? kept.resource?.[rc.type]?.[rc.name] : undefined;
    if (override === undefined) {
      problems.push(`${address}: ${actions.join(', ')}: not an object whose grants moves kept`);
      continue;
    }
    if (actions.length !== 1 || actions[0] !== 'update') {
      problems.push(`${address}: ${actions.join(', ')}: a release only updates in place`);
      continue;
    }
    const before = rc.change?.before ?? {};
    const after = rc.change?.after ?? {};
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const same = JSON.stringify(before[key]) === JSON.stringify(after[key]);
      if (!(key in override)) {
        if (!same) problems.push(`${address}: changes ${key}, which moves did not keep`);
        continue;
      }
      const was = resolve(override[key]);
      if (!sameValue(before[key], was)) problems.push(`${address}: ${key} on the store is not what moves kept`);
      else if (!startsWith(was, after[key])) problems.push(`${address}: ${key} becomes more than the stack declares without the kept grants`);
    }
  }
  return problems;
}

/**
 * True when `value` is part of `whole`: a beginning of a text (a policy without the appended blocks),
 * or some of the items of a list (token policies: the provider keeps them as a set, in its own order).
 */
function startsWith(whole: unknown, value: unknown): boolean {
  if (typeof whole === 'string' && typeof value === 'string') return whole.startsWith(value);
  if (Array.isArray(whole) && Array.isArray(value)) return value.every((v) => whole.some((w) => JSON.stringify(v) === JSON.stringify(w)));
  return false;
}

/** Equal values, lists compared as sets (the provider's order is its own). */
function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && startsWith(a, b) && startsWith(b, a);
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Refuses, before the engine applies `planFile` in `stackDir`, anything but the release of the
 * grants `moves`' override kept: `keptFile` must be that override, as sealed in the stack directory
 * (taken out of it so that the plan declares the stack without it), and the plan must do no more than
 * {@link releasedGrantsProblems} allows.
 * @throws ReleasedGrantsRefused (exit 4) naming every problem
 */
export function checkReleasedGrants(stack: string, stackDir: string, planFile: string, keptFile: string, engine: string, env: NodeJS.ProcessEnv): void {
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
  const problems = releasedGrantsProblems(JSON.parse(shown.stdout), JSON.parse(content.toString('utf8')));
  if (problems.length > 0) throw new ReleasedGrantsRefused(stack, problems);
}
