import * as path from 'path';
import { storePolicyName } from '../model/store-policy-name';
import { compareStrings } from '../private/compare-strings';
import { commentText, terraformString } from '../render/text-encoders';
import { SynthStack } from '../sources/synth-output';
import * as fs from 'fs';
import { pipelineGrantPolicyName } from '../model/pipeline-grant-name';
import { locateStoreObject } from './declared-object';
import { RETIRED_GRANTS_FILE } from '../model/retired-grants-file';
import { declaredPipelineGrants } from './pipeline-grants';
import { ReleasedAccess } from '../model/released-access';

export { RETIRED_GRANTS_FILE } from '../model/retired-grants-file';

/** What one stack of HEAD keeps of BASE until the retired stacks' removal is applied. */
export interface RetiredStackGrants {
  /** The stack of HEAD (`ci-access`). */
  readonly stack: string;
  /** The retired stacks whose policies it keeps, sorted. */
  readonly retired: readonly string[];
  /** The override file's content. */
  readonly content: string;
  /**
   * What the roles and policies of this stack lose once the retired stacks' removal is applied and the
   * pipeline releases what the override kept (`tf --released-grants`): an access change for the note.
   * @default none
   */
  readonly released?: readonly ReleasedAccess[];
}

/** Role resource types whose `token_policies` attach policies by name: the roles whose policies moves keeps. */
export const KEPT_ROLE_TYPES: readonly string[] = ['vault_approle_auth_backend_role', 'vault_jwt_auth_backend_role'];

/** The `path "..." { ... }` blocks of a policy text as the library renders it (Terraform-escaped, as in `cdk.tf.json`), by path. */
function ruleBlocks(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^path "([^"\n]+)" \{\n {2}capabilities = \[[^\]\n]*\]\n\}$/gm)].map((m) => [m[1], m[0]]));
}

/**
 * The policies of the stacks BASE has and HEAD no longer has (a removed `people` section, the last
 * application of a shard, fewer shards) that a role of a stack HEAD keeps still needs until the
 * retired stack's removal is applied: the configuration pipeline's roles, whose grant in each stack
 * is a policy of that stack attached by name (docs/pipelines.md §8, §9). The pipeline applies the
 * roles' stack first and destroys a retired stack's objects only in the manual job, later: HEAD's
 * roles alone would have lost the grant by then (403).
 *
 * For each role of a stack of HEAD that BASE also declares (same address), the names of retired
 * stacks' policies BASE attached and HEAD does not are kept in its `token_policies`; for each policy
 * of that stack, BASE's rules on those policies' own paths (`sys/policies/acl/<name>`: the apply role
 * destroys the retired grants) that HEAD lacks are appended to HEAD's text. Nothing else changes.
 * @returns one entry per stack of HEAD that keeps anything, by stack name
 */
export function retiredStackGrants(base: readonly SynthStack[], head: readonly SynthStack[]): RetiredStackGrants[] {
  const headNames = new Set(head.map((s) => s.name));
  // Only the pipeline roles' grants of the retired stacks (the same names a release may take away,
  // lib/engine/release-basis.ts): another role attached to a retired stack's policy (an application's
  // role given another's policy by an override, say) loses it in the apply, as the review shows.
  const retiredPolicies = new Map<string, string>();
  for (const grant of declaredPipelineGrants(base, (s) => !headNames.has(s))) {
    const block = base.find((s) => s.name === grant.stack)?.resources.vault_policy?.[grant.address.slice('vault_policy.'.length)];
    if (typeof block?.name === 'string') retiredPolicies.set(storePolicyName(block.name), grant.stack);
  }
  if (retiredPolicies.size === 0) return [];
  const out: RetiredStackGrants[] = [];
  for (const stack of head) {
    const before = base.find((s) => s.name === stack.name);
    if (!before) continue;
    const resource: Record<string, Record<string, Record<string, unknown>>> = {};
    const retired = new Set<string>();
    const released: ReleasedAccess[] = [];
    const set = (type: string, id: string, attribute: string, value: unknown) => ((resource[type] ??= {})[id] = { [attribute]: value });
    for (const type of KEPT_ROLE_TYPES) {
      for (const [id, block] of Object.entries(stack.resources[type] ?? {})) {
        const was = before.resources[type]?.[id]?.token_policies;
        const is = block.token_policies;
        if (!Array.isArray(was) || !Array.isArray(is)) continue;
        const kept = was.filter((n): n is string => typeof n === 'string' && retiredPolicies.has(storePolicyName(n)) && !is.includes(n));
        if (kept.length === 0) continue;
        kept.forEach((n) => retired.add(retiredPolicies.get(storePolicyName(n))!));
        const name = typeof block.role_name === 'string' ? block.role_name : id;
        kept.forEach((n) => released.push({ address: `${type}.${id}`, name, loses: 'policy', what: n }));
        set(type, id, 'token_policies', [...is, ...kept]);
      }
    }
    for (const [id, block] of Object.entries(stack.resources.vault_policy ?? {})) {
      const was = before.resources.vault_policy?.[id]?.policy;
      if (typeof was !== 'string' || typeof block.policy !== 'string') continue;
      const has = ruleBlocks(block.policy);
      const kept = [...ruleBlocks(was)].filter(([p]) => {
        const name = /^sys\/policies\/acl\/(.+)$/.exec(p)?.[1];
        return name !== undefined && retiredPolicies.has(storePolicyName(name)) && !has.has(p);
      });
      if (kept.length === 0) continue;
      const stacks = [...new Set(kept.map(([p]) => retiredPolicies.get(storePolicyName(p.slice('sys/policies/acl/'.length)))!))].sort(compareStrings);
      stacks.forEach((s) => retired.add(s));
      const name = typeof block.name === 'string' ? block.name : id;
      kept.forEach(([p, text]) => released.push({ address: `vault_policy.${id}`, name, loses: 'rule', what: `${p} [${/capabilities = \[([^\]\n]*)\]/.exec(text)?.[1] ?? ''}]` }));
      const why = terraformString(`# ${commentText(`Kept by secretstore-iac moves until the removal of ${stacks.join(', ')} (a stack this configuration no longer has) is applied.`)}`);
      set('vault_policy', id, 'policy', `${block.policy}${kept.map(([, text]) => `\n${why}\n${text}\n`).join('')}`);
    }
    if (Object.keys(resource).length === 0) continue;
    const names = [...retired].sort(compareStrings);
    const content = {
      '//': `Written by secretstore-iac moves: the roles of this stack keep the policies of ${names.join(', ')} (stacks this configuration no longer has, whose removal is applied after this stack) until that removal is applied. Re-run moves with the base the stores were applied from; delete this file once the removal is applied.`,
      resource,
    };
    out.push({ stack: stack.name, retired: names, content: `${JSON.stringify(content, null, 2)}\n`, released });
  }
  return out;
}

/** One change `moves` makes to a stack's override file: written with `content`, or removed (a stale one). */
export interface RetiredGrantsUpdate {
  /** The file, `HEAD/stacks/<stack>/retired-stack-grants_override.tf.json`. */
  readonly file: string;
  /** What it keeps; undefined when the file goes. */
  readonly grants?: RetiredStackGrants;
}

/**
 * The override files to write into HEAD (the synthesized output directory `headDir`, read as `head`)
 * against BASE's output (read as `base`): one per stack that keeps retired stacks' policies
 * ({@link retiredStackGrants}), and the removal of a stale one in every other stack of HEAD (written
 * against another base). The caller has both outputs read already (`moves`).
 */
export function retiredGrantsUpdates(headDir: string, base: readonly SynthStack[], head: readonly SynthStack[]): RetiredGrantsUpdate[] {
  const grants = new Map(retiredStackGrants(base, head).map((g) => [g.stack, g]));
  return head
    .map((s) => ({ file: path.join(headDir, 'stacks', s.name, RETIRED_GRANTS_FILE), grants: grants.get(s.name) }))
    .filter((u) => u.grants !== undefined || fs.existsSync(u.file));
}

/**
 * The record `secretstore-iac moves` writes into a retired stack's directory (beside its moves file;
 * the engine does not read it): the configuration pipeline roles' own grants in that stack, as BASE's
 * synthesis declared them ({@link retiredOwnGrants}). `tf` reads it to let their destroys through
 * without approval ({@link ownGrantDestroys}).
 */
export const RETIRED_OWN_GRANTS_FILE = 'retired-own-grants.json';

/** One pipeline role's grant in a stack BASE has and HEAD no longer has, as BASE's synthesis declared it. */
export interface RetiredOwnGrant {
  /** The retired stack, which declared it (`app-roles-02`). */
  readonly stack: string;
  /** Its resource address there (`vault_policy.secretstore-iac-grant-pipeline-apply`). */
  readonly address: string;
  /** Its store path (`sys/policies/acl/secretstore-iac-pipeline-app-roles-02`). */
  readonly storePath: string;
  /** The pipeline role it grants to (`secretstore-iac-pipeline`). */
  readonly role: string;
}

/**
 * The configuration pipeline roles' own grants in the stacks BASE has and HEAD no longer has (fewer
 * shards, a removed section), recognised from what BASE's synthesis recorded, never by name alone
 * ({@link declaredPipelineGrants}).
 * @returns the grants, sorted by stack, then address
 */
export function retiredOwnGrants(base: readonly SynthStack[], head: readonly SynthStack[]): RetiredOwnGrant[] {
  const headNames = new Set(head.map((s) => s.name));
  return declaredPipelineGrants(base, (stack) => !headNames.has(stack));
}

/** The content of a retired stack's {@link RETIRED_OWN_GRANTS_FILE}, byte-identical for the same grants. */
export function renderRetiredOwnGrants(grants: readonly RetiredOwnGrant[]): string {
  return `${JSON.stringify(
    {
      '//': 'Written by secretstore-iac moves: the configuration pipeline roles\' own grants in this stack (one the configuration no longer has), as the base\'s synthesis declared them. `secretstore-iac tf` destroys them without --allow-removals when they are all this stack\'s plan destroys (docs/pipelines.md §8).',
      grants: grants.map((g) => ({ address: g.address, storePath: g.storePath, role: g.role })),
    },
    null,
    2,
  )}\n`;
}

/**
 * The own grants a retired stack's directory records ({@link RETIRED_OWN_GRANTS_FILE}); none when the
 * file is absent.
 * @throws Error naming the file when it is not what `moves` writes
 */
export function readRetiredOwnGrants(stackDir: string): RetiredOwnGrant[] {
  const file = path.join(stackDir, RETIRED_OWN_GRANTS_FILE);
  if (!fs.existsSync(file)) return [];
  const bad = (why: string) => new Error(`${file} is not what \`secretstore-iac moves\` writes (${why}): run moves again`);
  let document: unknown;
  try {
    document = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw bad((e as Error).message);
  }
  const grants = (document as { grants?: unknown } | null)?.grants;
  if (!Array.isArray(grants)) throw bad('no "grants" list');
  const stack = path.basename(stackDir);
  return grants.map((g) => {
    const { address, storePath, role } = (g ?? {}) as Record<string, unknown>;
    if (typeof address !== 'string' || typeof storePath !== 'string' || typeof role !== 'string') throw bad('a grant without address, storePath and role');
    return { stack, address, storePath, role };
  });
}

/**
 * The configuration pipeline roles of a synthesized output: each JWT role that has its grant in at
 * least one of the output's stacks ({@link declaredPipelineGrants}), with the resource id its grant
 * has (the same in every stack: the library's grant construct).
 */
function pipelineRoles(output: readonly SynthStack[]): Map<string, { readonly grantId: string }> {
  return new Map(declaredPipelineGrants(output).map((g) => [g.role, { grantId: g.address.slice('vault_policy.'.length) }]));
}

/**
 * What in a retired stack's record ({@link readRetiredOwnGrants}) is not a configuration pipeline
 * role's own grant in THAT stack, checked against what HEAD's synthesis declares, never against the
 * record alone (a record is a file anyone may edit, its seal with it): each recorded grant must name a
 * pipeline role HEAD declares (a JWT role with its grant in HEAD's stacks), at the address that
 * role's grant has in every stack, with the store path of that role's grant for this stack's name
 * (`sys/policies/acl/<role name>-<stack>`). An application's role or policy, a people role, or a
 * grant of another stack never qualifies. One line per entry that fails, naming it.
 * @param stack the retired stack (its directory's name), which HEAD must not have
 * @param head HEAD's synthesized output (the output the stack directory belongs to)
 */
export function retiredOwnGrantProblems(recorded: readonly RetiredOwnGrant[], stack: string, head: readonly SynthStack[]): string[] {
  if (head.some((s) => s.name === stack)) {
    return recorded.length > 0 ? [`${stack} is a stack HEAD still declares: it has no retired grants, yet its ${RETIRED_OWN_GRANTS_FILE} records ${recorded.length}`] : [];
  }
  const roles = pipelineRoles(head);
  const problems: string[] = [];
  for (const g of recorded) {
    const entry = `{"address": ${JSON.stringify(g.address)}, "storePath": ${JSON.stringify(g.storePath)}, "role": ${JSON.stringify(g.role)}}`;
    const role = roles.get(g.role);
    if (role === undefined) {
      problems.push(`${entry}: ${JSON.stringify(g.role)} is no configuration pipeline role of HEAD's synthesis (a JWT role with its grant in HEAD's stacks)`);
      continue;
    }
    const expected = locateStoreObject('vault_policy', { name: pipelineGrantPolicyName(g.role, stack) })?.storePath;
    if (g.storePath !== expected) problems.push(`${entry}: the grant of ${g.role} in ${stack} is ${expected ?? 'no store object'}, not ${g.storePath}`);
    else if (g.address !== `vault_policy.${role.grantId}`) problems.push(`${entry}: the grant of ${g.role} is declared at vault_policy.${role.grantId}, not ${g.address}`);
  }
  return problems;
}

/** What a destroy in a plan shows to be checked against a retired stack's own grants. */
export interface PlannedDestroy {
  /** Resource address. */
  readonly address: string;
  /** The engine's actions (`["delete"]` for a destroy). */
  readonly actions: readonly string[];
  /** The object's store path, when its type is known. */
  readonly storePath?: string;
}

/**
 * The destroys of a retired stack's plan that need no approval: its own pipeline grants
 * ({@link retiredOwnGrants}), when they are ALL the plan destroys (the rest forgets what moved).
 * Each must be a plain destroy (not a replacement) of a recorded grant, at its recorded address and
 * store path, declared by no stack of HEAD. Any other destroy in the plan (an application's role or
 * policy, a people role, a grant of a stack still declared) and the grants wait together for the
 * manual approval: returns none.
 * @param recorded the stack's record (`readRetiredOwnGrants`); none for a stack HEAD still has
 * @param declared the store paths every stack of HEAD declares
 */
export function ownGrantDestroys<T extends PlannedDestroy>(destroys: readonly T[], recorded: readonly RetiredOwnGrant[], declared: ReadonlySet<string>): T[] {
  const isOwnGrant = (d: T) =>
    d.actions.length === 1 &&
    d.actions[0] === 'delete' &&
    d.storePath !== undefined &&
    !declared.has(d.storePath) &&
    recorded.some((g) => g.address === d.address && g.storePath === d.storePath);
  return destroys.length > 0 && destroys.every(isOwnGrant) ? [...destroys] : [];
}
