import * as fs from 'fs';
import * as path from 'path';
import { locateStoreObject, readDeclaredObjects } from '../reconcile/declared-object';
import { runEngineCollected } from './engine-output';
import { GuardRefusal } from './guard-refusal';
import { makeGuardDirectory, temporaryDirectory } from './guard-directory';
import { mountTypeFix } from '../reconcile/mount-type-mismatch';
import { PlannedCreate, plannedCreates } from './takeover-guard';

/**
 * One object a saved plan would destroy: deleted outright, or replaced (deleted and created again).
 * Replacing an AppRole role gives it a new Role ID and invalidates every Secret ID issued for it;
 * replacing an auth mount deletes every role under it. Nothing the library adopts or applies may do
 * that without a person deciding it.
 */
export interface PlannedDestruction {
  /** Resource address (`vault_auth_backend.approle_backend_7D2C0F1A`). */
  readonly address: string;
  /** The engine's actions (`["delete","create"]`, `["create","delete"]`, `["delete"]`). */
  readonly actions: readonly string[];
  /** Attributes whose change forces the replacement (`local`, `role_type`), when the engine names them. */
  readonly attributes: readonly string[];
  /** Construct path of the declaration (cdktf's `//` metadata), when the stack records it. */
  readonly declaredAt?: string;
  /** The engine's `action_reason`, when it gives one. */
  readonly reason?: string;
  /** Before → after of each forcing attribute, as text (`true → null`). */
  readonly values: Readonly<Record<string, string>>;
  /** The store object's path, from the plan's values before (`auth/approle/role/orchestrator-dev`), when the type is known. */
  readonly storePath?: string;
  /** The other stack of the same output that declares the destroyed object now (it moved there). */
  readonly declaredInStack?: string;
  /** The forcing attributes' values before (the store's, as in state). */
  readonly before?: Readonly<Record<string, unknown>>;
  /** The forcing attributes' values after (the declared ones). */
  readonly after?: Readonly<Record<string, unknown>>;
}

/** Thrown when a plan would destroy or replace an object; the CLI exits with `ExitCode.destructionRefused` (4). */
export class DestructionRefused extends GuardRefusal {
  constructor(
    readonly destructions: readonly PlannedDestruction[],
    what: string,
    /** The stack, named in the fix's commands (`STACK` when not given). */
    stack = 'STACK',
  ) {
    super(`${what}: the plan would destroy or replace ${destructions.length} object${destructions.length === 1 ? '' : 's'}, refused:\n${destructions.map((d) => `  ${describeDestruction(d, stack)}`).join('\n')}`);
    this.name = 'DestructionRefused';
  }
}

/** The JSON shape of one step of `replace_paths` (`["local"]`, `["bound_claims", "x"]`). */
type PathStep = string | number;

const text = (v: unknown): string => (v === undefined ? 'unset' : JSON.stringify(v));

/**
 * The objects a plan (`show -json` of a saved plan) would delete or replace, sorted by address.
 * Reads `resource_changes[].change.actions` and `replace_paths` as OpenTofu and Terraform write them.
 */
export function plannedDestructions(plan: unknown): PlannedDestruction[] {
  const changes = (plan as { resource_changes?: unknown[] })?.resource_changes;
  if (!Array.isArray(changes)) return [];
  const out: PlannedDestruction[] = [];
  for (const rc of changes as any[]) {
    const actions: string[] = Array.isArray(rc?.change?.actions) ? rc.change.actions.map(String) : [];
    if (!actions.includes('delete')) continue;
    const paths: PathStep[][] = Array.isArray(rc.change.replace_paths) ? rc.change.replace_paths : [];
    const attributes = [...new Set(paths.filter((p) => Array.isArray(p) && p.length > 0).map((p) => String(p[0])))].sort();
    const values: Record<string, string> = {};
    const before: Record<string, unknown> = {};
    const after: Record<string, unknown> = {};
    for (const a of attributes) {
      values[a] = `${text(rc.change.before?.[a])} → ${text(rc.change.after?.[a])}`;
      before[a] = rc.change.before?.[a];
      after[a] = rc.change.after?.[a];
    }
    const located = rc.change.before && typeof rc.change.before === 'object' ? locateStoreObject(String(rc.type), rc.change.before) : undefined;
    out.push({
      address: String(rc.address),
      actions,
      attributes,
      values,
      ...(attributes.length > 0 ? { before, after } : {}),
      reason: typeof rc.action_reason === 'string' ? rc.action_reason : undefined,
      ...(located ? { storePath: located.storePath } : {}),
    });
  }
  return out.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
}

/** The store's value of a forcing attribute, from its `before → after` text (`true`, `"oidc"`, `null`). */
function storeValue(d: PlannedDestruction, attribute: string): string {
  return (d.values[attribute] ?? '').split(' → ')[0];
}

/** The fix for a `local` that forces a replacement, in the direction the store has it. */
function localAdvice(construct: string): (d: PlannedDestruction) => string {
  return (d) =>
    storeValue(d, 'local') === 'true'
      ? `the mount is local (not replicated) on the store: declare \`local: true\` on the ${construct} construct, or remount it by hand`
      : `the store's mount is not local (it is replicated), the declaration says \`local: true\`: remove \`local: true\` (or declare \`local: false\`) on the ${construct} construct, or remount it by hand as a local mount`;
}

/** The fix for a mount `type` that forces a replacement, in the direction the store has it ({@link mountTypeFix}). */
function typeAdvice(d: PlannedDestruction): string {
  const [store, declared] = (d.values.type ?? '').split(' → ').map((v) => v.replace(/^"|"$/g, ''));
  const mountPath = d.storePath?.replace(/^sys\/auth\//, '') ?? 'PATH';
  // The guard reads no store CLI: the fix names both.
  return `the store's method at ${mountPath}/ is of type ${store}, the declared one of type ${declared}: ${mountTypeFix(mountPath, store, declared)}`;
}

/** The store's and the declared value of a forcing attribute, strings without their quotes (`approle`, `apps`). */
function storeAndDeclared(d: PlannedDestruction, attribute: string): [string, string] {
  const [store, declared] = (d.values[attribute] ?? '').split(' → ').map((v) => v.replace(/^"|"$/g, ''));
  return [store, declared ?? ''];
}

/**
 * The fix for a role whose mount (`backend`) forces a replacement: the mount's declared path changed
 * after the role was applied. The provider never moves a role between mounts: it deletes the store's
 * and creates another (for an AppRole role a new Role ID, every Secret ID refused).
 */
function backendAdvice(declaration: (path: string) => string, lost: string): (d: PlannedDestruction) => string {
  return (d) => {
    const [store, declared] = storeAndDeclared(d, 'backend');
    return (
      `the role is under the mount ${store}/ on the store, declared under ${declared}/ (the mount's declared path changed after it was applied): ` +
      `declare the store's path again (${declaration(store)}) and synthesize; applying would delete the role and create another under ${declared}/ (${lost})`
    );
  };
}

/** The fix for a name that forces a replacement (`role_name`, a policy's `name`). */
function nameAdvice(what: string, declaredBy: string, lost: string): (d: PlannedDestruction) => string {
  return (d) => {
    const attribute = d.attributes.includes('role_name') ? 'role_name' : 'name';
    const [store, declared] = storeAndDeclared(d, attribute);
    return `the ${what} is named ${store} on the store, declared ${declared}: declare the store's name again (${declaredBy}); applying would delete ${store} and create ${declared} (${lost})`;
  };
}

/** The fix for a mount path that forces a replacement (a store without remount). */
function mountPathAdvice(declaration: (path: string) => string): (d: PlannedDestruction) => string {
  return (d) => {
    const [store, declared] = storeAndDeclared(d, 'path');
    return `the method is mounted at ${store}/ on the store, declared at ${declared}/: declare the store's path again (${declaration(store)}); applying would delete ${store}/ with every role under it`;
  };
}

/** Where the AppRole mount's path is declared, with the store's value. */
const approlePath = (p: string) => `ApplicationStacks \`auth: { path: ${JSON.stringify(p)} }\`, AppRoleAuth \`path\``;
/** Where a JWT or OIDC mount's path is declared, with the store's value. */
const jwtPath = (p: string) => `CiJwtAuth \`path: ${JSON.stringify(p)}\`, or \`people.path: ${JSON.stringify(p)}\` for the people's OIDC method`;
const APPROLE_LOST = 'a new Role ID, every Secret ID issued for it refused';
const JWT_LOST = 'a login naming the store\'s role fails';

/**
 * What to declare so that the store's object is kept, per resource type and forcing attribute: the
 * construct property that says what the store has (in the direction the store has it).
 */
const ADVICE: Readonly<Record<string, (d: PlannedDestruction) => string>> = {
  'vault_auth_backend.local': localAdvice('AppRoleAuth'),
  'vault_jwt_auth_backend.local': localAdvice('CiJwtAuth (or OidcAuth, `people.local`, for the people\'s mount)'),
  'vault_auth_backend.type': typeAdvice,
  'vault_auth_backend.path': mountPathAdvice(approlePath),
  'vault_jwt_auth_backend.path': mountPathAdvice(jwtPath),
  'vault_approle_auth_backend_role.backend': backendAdvice(approlePath, APPROLE_LOST),
  'vault_jwt_auth_backend_role.backend': backendAdvice(jwtPath, JWT_LOST),
  'vault_approle_auth_backend_role.role_name': nameAdvice('role', 'the application\'s `roleName`', APPROLE_LOST),
  'vault_jwt_auth_backend_role.role_name': nameAdvice('role', 'the role\'s name', JWT_LOST),
  'vault_jwt_auth_backend.type': typeAdvice,
  'vault_jwt_auth_backend_role.role_type': (d) =>
    storeValue(d, 'role_type') === '"jwt"'
      ? 'the store\'s role is a JWT role (role_type jwt) where an OIDC role (people\'s single sign-on) is declared: delete the store\'s role by hand if no CI job logs in with it, or rename the declared group'
      : 'the store\'s role is an OIDC role (role_type oidc): the library declares JWT roles for CI; delete the role by hand if no person logs in with it, or rename the declared role',
  'vault_policy.name': nameAdvice('policy', 'its name', 'a token naming the store\'s policy loses its rules'),
};

/** The engine's `action_reason` for an object an interrupted apply left tainted. */
const TAINTED = 'replace_because_tainted';

/** One line: the object, the actions, the forcing attributes with their values, and the fix. */
export function describeDestruction(d: PlannedDestruction, stack = 'STACK'): string {
  const type = d.address.split('.')[0];
  const kind = d.actions.length === 1 ? 'destroyed' : 'replaced (destroyed, then created again)';
  const forcing = d.attributes.length > 0 ? `; forced by ${d.attributes.map((a) => `${a} (${d.values[a]})`).join(', ')}` : d.reason ? `; ${d.reason}` : '';
  const where = d.declaredAt ? ` declared at ${d.declaredAt}` : '';
  if (d.declaredInStack !== undefined && d.actions.length === 1) {
    return `${d.address}${where} would be destroyed, but ${d.storePath} is declared in stack ${d.declaredInStack} now: it moved. Fix: run \`secretstore-iac moves BASE HEAD\` (BASE: the configuration last applied, HEAD: this output) to forget it here and import it there, keeping the object (docs/sharding.md)`;
  }
  const advice = d.attributes.map((a) => ADVICE[`${type}.${a}`]?.(d)).filter((a): a is string => a !== undefined);
  const byPerson = 'a person decides that: run it without --refuse-replace (the engine shows the plan and asks)';
  const fix =
    advice.length > 0
      ? `. Fix: ${advice.join('; ')}`
      : d.reason === TAINTED
        ? `. Fix: the object is tainted (an interrupted apply created it, then could not read it back): run \`secretstore-iac adopt ${stack}\`, which untaints what the store has (kept, updated in place) and forgets what it does not (created again)`
        : d.reason === 'replace_by_request'
          ? `. Fix: -replace= asked for it; ${byPerson}`
          : d.actions.length !== 1
            ? `. Fix: declare what the store has${d.attributes.length > 0 ? ` (${d.attributes.map((a) => `${a} ${storeValue(d, a)}`).join(', ')})` : ''}`
            : // A delete of an object the stack still declares is the destroy mode's (`destroy`, `-destroy`).
              d.declaredAt !== undefined
              ? `. Fix: the destroy mode (\`destroy\`, \`-destroy\`) asked for it; ${byPerson}, with --allow-destroy`
              : '. Fix: declare the object again; if a person decided to delete it, run the apply without --refuse-replace (the engine shows the plan and asks)';
  return `${d.address}${where} would be ${kind}${forcing}${fix}`;
}

/** The construct path cdktf records for each resource of a stack (`//.metadata.path`). */
function declarationPaths(stackDir: string): Map<string, string> {
  const paths = new Map<string, string>();
  try {
    const stack = JSON.parse(fs.readFileSync(path.join(stackDir, 'cdk.tf.json'), 'utf8'));
    for (const [type, blocks] of Object.entries(stack.resource ?? {})) {
      for (const [id, block] of Object.entries(blocks as Record<string, any>)) {
        const p = block?.['//']?.metadata?.path;
        if (typeof p === 'string') paths.set(`${type}.${id}`, p);
      }
    }
  } catch {
    // Without the stack file the report names addresses only.
  }
  return paths;
}

/**
 * Store path → stack, for the objects the other stacks of the stack's output declare (the output is
 * the directory two levels up, when it has a manifest): a destroyed object found there moved.
 */
function declaredInOtherStacks(stackDir: string): Map<string, string> {
  const outdir = path.dirname(path.dirname(stackDir));
  const stack = path.basename(stackDir);
  const found = new Map<string, string>();
  try {
    for (const o of readDeclaredObjects(outdir)) if (o.stack !== stack) found.set(o.storePath, o.stack);
  } catch {
    // Not a synthesized output (a hand-made directory): the report names no other stack.
  }
  return found;
}

/** What `--refuse-replace` reads in a plan: the objects it would destroy, and those it would create (to look up on the store). */
export interface PlanReview {
  /** Deleted or replaced objects, each with its declaration. */
  readonly destructions: PlannedDestruction[];
  /** Created objects of the types the store writes in place ({@link plannedCreates}). */
  readonly creates: PlannedCreate[];
}

/**
 * The review of a saved plan file (`ENGINE show -json PLAN`): its destructions, each with its
 * declaration, and its creates.
 * @throws Error with the engine's message when the plan cannot be read
 */
export function reviewSavedPlan(engine: string, stackDir: string, env: NodeJS.ProcessEnv, planFile: string): PlanReview {
  const shown = runEngineCollected(engine, ['show', '-json', planFile], stackDir, env);
  if (shown.status !== 0) throw new Error(`cannot read the plan ${planFile} with \`${path.basename(engine)} show -json\` (exit ${shown.status}): ${firstLines(shown.said)}`);
  const plan = JSON.parse(shown.stdout);
  const planned = plannedDestructions(plan);
  const declared = declarationPaths(stackDir);
  // Read every stack of the output only when something is destroyed: most plans destroy nothing,
  // and at 5,000 applications reading them is most of the guard's own time.
  const elsewhere = planned.length > 0 ? declaredInOtherStacks(stackDir) : new Map<string, string>();
  const destructions = planned.map((d) => ({
    ...d,
    declaredAt: declared.get(d.address),
    ...(d.storePath !== undefined && elsewhere.has(d.storePath) ? { declaredInStack: elsewhere.get(d.storePath) } : {}),
  }));
  return { destructions, creates: plannedCreates(plan) };
}

/** The destructions of a saved plan file ({@link reviewSavedPlan}). */
export function savedPlanDestructions(engine: string, stackDir: string, env: NodeJS.ProcessEnv, planFile: string): PlannedDestruction[] {
  return reviewSavedPlan(engine, stackDir, env, planFile).destructions;
}

/**
 * Plans a stack into a temporary file with `planArgs` (`plan` and the operator's options; the `-out`
 * is added), reviews it, and hands the review and the plan file to `use` (which may apply that very
 * plan); the plan file is removed afterwards.
 * @throws Error with the engine's message when the plan fails
 */
export async function withReviewedPlan<T>(
  engine: string,
  stackDir: string,
  env: NodeJS.ProcessEnv,
  planArgs: readonly string[],
  use: (review: PlanReview, planFile: string) => Promise<T>,
): Promise<T> {
  const dir = makeGuardDirectory(temporaryDirectory(env));
  const planFile = path.join(dir, 'guard.tfplan');
  try {
    const planned = runEngineCollected(engine, [...planArgs, `-out=${planFile}`], stackDir, env);
    if (planned.status !== 0) throw new Error(`\`${path.basename(engine)} ${planArgs.join(' ')}\` failed in ${stackDir} (exit ${planned.status}): ${firstLines(planned.said)}`);
    return await use(reviewSavedPlan(engine, stackDir, env, planFile), planFile);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Plans a stack into a temporary file and reviews it (nothing is applied; the plan file is removed).
 * @throws Error with the engine's message when the plan fails
 */
export function reviewPlan(engine: string, stackDir: string, env: NodeJS.ProcessEnv): PlanReview {
  const dir = makeGuardDirectory(temporaryDirectory(env));
  const planFile = path.join(dir, 'guard.tfplan');
  try {
    const planned = runEngineCollected(engine, ['plan', '-input=false', '-lock=false', `-out=${planFile}`], stackDir, env);
    if (planned.status !== 0) throw new Error(`\`${path.basename(engine)} plan\` failed in ${stackDir} (exit ${planned.status}): ${firstLines(planned.said)}`);
    return reviewSavedPlan(engine, stackDir, env, planFile);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What a plan of the stack would destroy ({@link reviewPlan}). */
export function planDestructions(engine: string, stackDir: string, env: NodeJS.ProcessEnv): PlannedDestruction[] {
  return reviewPlan(engine, stackDir, env).destructions;
}

const firstLines = (said: string): string => said.split('\n').filter(Boolean).slice(0, 8).join(' ');
