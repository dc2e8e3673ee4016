import * as fs from 'fs';
import * as path from 'path';
import { engineToken } from '../engine/kv-mount-guard';
import { pipelineGrantPolicyName } from '../model/pipeline-grant-name';
import { storePolicyName } from '../model/store-policy-name';
import { isRetiredStackDirectory, MOVES_FILE } from '../reconcile/stack-moves';
import { resolveStoreAddress } from '../store/store-address';
import { StoreClient } from '../store/store-client';
import { resolveStoreNamespace } from '../store/store-namespace-setting';
import { StoreTransport } from '../store/store-transport';
import { PipelineDescription } from './pipeline-description';
import { jobOutdir, PipelineJobContext } from './pipeline-job-context';

/**
 * Why a stack's engine run gets a token of its own (docs/pipelines.md §9): a pipeline role's token
 * carries the role's grant of every stack, and the store builds the token's ACL from all its policies
 * on every request, so at 100 shard stacks each request of the engine costs ~100 ms where one grant
 * costs ~1.5 ms. A stack's run needs its own grant (and, for objects moving into it, the grants that
 * still cover them); the child token it gets carries only those, the role's own policy and `default`.
 */

/** Another stack whose grant a stack's run needs, and why (one line's part). */
export interface StackGrantNeed {
  readonly stack: string;
  readonly why: string;
}

/** The policies of a stack's token, or why the job's token is used as it is; the line says which. */
export interface StackTokenChoice {
  /** The child token's policies (store names, sorted as carried); undefined: the job's token as it is. */
  readonly policies?: readonly string[];
  /** Whether the child token goes without `default` (the job's token does not carry it). */
  readonly noDefaultPolicy: boolean;
  /** The decision in one line (no token, only policy names). */
  readonly line: string;
}

/**
 * The policies a stack's engine run carries, from the job token's `policies` (`auth/token/lookup-self`)
 * and the pipeline's description: the job's role is the pipeline role whose own policy the token
 * carries (the apply role first); the grants of that role are named by {@link pipelineGrantPolicyName}
 * for each of `grantStacks` (every stack of the pipeline and every retired stack). The run keeps every
 * policy of the job's token but the grants of the stacks it does not need (`stack` itself and `also`):
 * the role's own policy and `default` stay (so does a policy the role's tokens carry that is no grant).
 * The job's token is used as it is when it carries no pipeline role's policy (a root token, a person's
 * token on a laptop) or nothing would be dropped.
 */
export function stackTokenChoice(
  stack: string,
  jobPolicies: readonly string[],
  description: Pick<PipelineDescription, 'roles'>,
  grantStacks: readonly string[],
  also: readonly StackGrantNeed[] = [],
): StackTokenChoice {
  const carried = new Set(jobPolicies);
  const noDefaultPolicy = !carried.has('default');
  const role = [description.roles.apply, description.roles.plan].find((r) => carried.has(storePolicyName(r)));
  if (role === undefined) {
    return {
      noDefaultPolicy,
      line: `${stack}: the engine uses the job's token as it is: it carries neither pipeline role's policy (${storePolicyName(description.roles.apply)}, ${storePolicyName(description.roles.plan)}): a root token or a person's token (on a laptop), not narrowed`,
    };
  }
  const grant = (s: string) => storePolicyName(pipelineGrantPolicyName(role, s));
  const needed = new Map<string, string>([[grant(stack), 'its own grant']]);
  for (const a of also) if (!needed.has(grant(a.stack))) needed.set(grant(a.stack), `the grant of ${a.stack}: ${a.why}`);
  const grants = new Set(grantStacks.map(grant));
  const dropped = jobPolicies.filter((p) => grants.has(p) && !needed.has(p));
  const policies = jobPolicies.filter((p) => !dropped.includes(p));
  const kept = [...needed].filter(([p]) => carried.has(p));
  const missing = [...needed].filter(([p]) => !carried.has(p)).map(([p]) => p);
  const keptText = kept.length > 0 ? kept.map(([p, why]) => `${p} (${why})`).join(', ') : 'no grant';
  const missingText = missing.length > 0 ? `; the job's token does not carry ${missing.join(', ')} (not on the store yet: a new stack's grant is applied with it)` : '';
  if (dropped.length === 0) {
    return { noDefaultPolicy, line: `${stack}: the engine uses the job's token as it is (role ${role}): it carries no other stack's grant (${policies.join(', ')})${missingText}` };
  }
  const others = policies.filter((p) => !needed.has(p));
  return {
    policies,
    noDefaultPolicy,
    line: `${stack}: the engine runs with a token of its own carrying ${policies.join(', ')}: role ${role}'s own policy${others.includes('default') ? ' and default' : ''}, ${keptText}${missingText}; not the ${dropped.length} other stacks' grants the job's token carries (the store builds a token's ACL from all its policies on every request)`,
  };
}

/** The store calls of a stack's token: the job token's policies, a child token, its revocation. */
export interface PipelineStackTokens {
  /** The job token's policies (`auth/token/lookup-self`); undefined when there is no token to look up. */
  jobPolicies(): Promise<readonly string[] | undefined>;
  /** A child token of the job's token carrying `policies` (`auth/token/create`), for `stack`. */
  create(stack: string, policies: readonly string[], noDefaultPolicy: boolean): Promise<string>;
  /** Revokes `token` (`auth/token/revoke-self` with it). */
  revoke(token: string): Promise<void>;
}

/**
 * The {@link PipelineStackTokens} of a job's environment: the token the engine would use
 * (`VAULT_TOKEN`, else `SECRETSTORE_TOKEN` or `BAO_TOKEN`, else the token helper's file:
 * {@link engineToken}), the store's address and the namespace the requests go to (the job's:
 * `VAULT_NAMESPACE`, set by the CI login), as the engine reads them. The job token's policies are
 * looked up once.
 */
export function storeStackTokens(env: NodeJS.ProcessEnv): PipelineStackTokens {
  // As the engine gets it: VAULT_TOKEN, else SECRETSTORE_TOKEN or BAO_TOKEN (lib/engine/engine-binary.ts), else ~/.vault-token.
  const given = [env.VAULT_TOKEN, env.SECRETSTORE_TOKEN, env.BAO_TOKEN].map((t) => (t ?? '').trim()).find((t) => t !== '');
  const jobToken = engineToken({ ...env, VAULT_TOKEN: given });
  let client: StoreClient | undefined;
  const store = () => {
    if (client === undefined) {
      client = new StoreClient({ address: resolveStoreAddress(env), token: jobToken, namespace: resolveStoreNamespace(env), transport: StoreTransport.fromEnvironment(env) });
    }
    return client;
  };
  let looked: Promise<readonly string[] | undefined> | undefined;
  return {
    jobPolicies() {
      looked ??= (async () => {
        if (jobToken === undefined) return undefined;
        const res = await store().request('GET', 'auth/token/lookup-self');
        const policies = res.body?.data?.policies;
        return Array.isArray(policies) ? policies.filter((p: unknown): p is string => typeof p === 'string') : [];
      })();
      return looked;
    },
    async create(stack, policies, noDefaultPolicy) {
      const res = await store().request('POST', 'auth/token/create', {
        policies,
        no_default_policy: noDefaultPolicy,
        display_name: `secretstore-iac-stack-${stack}`,
        meta: { stack },
      });
      const token = res.body?.auth?.client_token;
      if (typeof token !== 'string' || token === '') throw new Error('the store answered auth/token/create without a token');
      return token;
    },
    async revoke(token) {
      await store().request('POST', 'auth/token/revoke-self', undefined, token);
    },
  };
}

/** Whether a stack directory's moves file has `key` blocks (`import`: objects arrive; `removed`: objects leave). */
function movesFileHas(stackDir: string, key: 'import' | 'removed'): boolean {
  const file = path.join(stackDir, MOVES_FILE);
  if (!fs.existsSync(file)) return false;
  try {
    const blocks = (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>)[key];
    return Array.isArray(blocks) && blocks.length > 0;
  } catch {
    return false;
  }
}

/**
 * The stacks whose grants a stack's run may need and the other stacks' grants it needs, from the
 * synthesized output (`moves`' files, one fact in one place):
 * - every stack of the pipeline and every retired stack (a directory holding only its moves file) is a
 *   grant's stack;
 * - a stack whose moves file imports objects (they moved into it since the base) needs the grants of
 *   the stacks whose moves files forget objects (they moved out, retired stacks included): until this
 *   stack's apply stores its new grant, only theirs covers the objects it imports. Which object came
 *   from which stack is not recorded there: every such stack's grant, a handful at most.
 * A retired stack's run needs its own grant only (the roles keep it until its removal: lib/reconcile/retired-stack-grants.ts).
 */
export function stackGrantNeeds(outdir: string, description: Pick<PipelineDescription, 'stacks'>, stack: string): { readonly grantStacks: string[]; readonly also: StackGrantNeed[] } {
  const stacksDir = path.join(outdir, 'stacks');
  const dirs = fs.existsSync(stacksDir) ? fs.readdirSync(stacksDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort() : [];
  const retired = dirs.filter((d) => isRetiredStackDirectory(path.join(stacksDir, d)));
  const grantStacks = [...new Set([...description.stacks, ...retired])];
  if (!movesFileHas(path.join(stacksDir, stack), 'import')) return { grantStacks, also: [] };
  const also = dirs
    .filter((d) => d !== stack && movesFileHas(path.join(stacksDir, d), 'removed'))
    .map((d) => ({ stack: d, why: `objects moved out of it, and ${stack} imports objects that moved in: its grant covers them until ${stack}'s apply` }));
  return { grantStacks, also };
}

/**
 * Runs one stack's engine runs (`run`, given the environment to add) with the stack's own token
 * ({@link stackTokenChoice}) as `VAULT_TOKEN`, revoked when they end (best effort; a revocation that
 * fails is logged, and the token ends with the job's). Without {@link PipelineJobContext.tokens}, or
 * when the job's token cannot be looked up or a child token cannot be made, the runs use the job's
 * token as it is, saying why. No token is ever logged.
 */
export async function withStackToken(ctx: PipelineJobContext, stack: string, env: Readonly<Record<string, string>>, run: (env: Readonly<Record<string, string>>) => Promise<number>): Promise<number> {
  const tokens = ctx.tokens;
  if (tokens === undefined) return run(env);
  let choice: StackTokenChoice;
  try {
    const policies = await tokens.jobPolicies();
    if (policies === undefined) {
      ctx.log.decide(`${stack}: no store token (VAULT_TOKEN, SECRETSTORE_TOKEN, BAO_TOKEN, ~/.vault-token): nothing to narrow`, stack);
      return run(env);
    }
    const needs = stackGrantNeeds(jobOutdir(ctx), ctx.description, stack);
    choice = stackTokenChoice(stack, policies, ctx.description, needs.grantStacks, needs.also);
  } catch (e) {
    ctx.log.decide(`${stack}: the job's token could not be looked up (${(e as Error).message}): the engine uses it as it is, not narrowed`, stack);
    return run(env);
  }
  if (choice.policies === undefined) {
    ctx.log.decide(choice.line, stack);
    return run(env);
  }
  let token: string;
  try {
    token = await tokens.create(stack, choice.policies, choice.noDefaultPolicy);
  } catch (e) {
    ctx.log.decide(`${stack}: a token of its own could not be made (${(e as Error).message}): the engine uses the job's token as it is, not narrowed`, stack);
    return run(env);
  }
  ctx.log.decide(choice.line, stack);
  try {
    return await run({ ...env, VAULT_TOKEN: token });
  } finally {
    try {
      await tokens.revoke(token);
    } catch (e) {
      ctx.log.decide(`${stack}: its token could not be revoked (${(e as Error).message}): it ends with the job's token`, stack);
    }
  }
}

/**
 * Runs `steps` (engine argument lists) of `stack` one after the other, with the stack's own token
 * ({@link withStackToken}); the first that fails ends them, and `failed(step, code)` (the step's
 * engine command, its exit code) is the job log's line for it.
 * @returns 0, or the exit code of the step that failed
 */
export function runStackEngineSteps(
  ctx: PipelineJobContext,
  stack: string,
  env: Readonly<Record<string, string>>,
  steps: readonly (readonly string[])[],
  failed: (step: string, code: number) => string,
): Promise<number> {
  return withStackToken(ctx, stack, env, async (stackEnv) => {
    for (const args of steps) {
      const code = await ctx.engine(args, stackEnv);
      if (code !== 0) {
        ctx.log.decide(failed(args[args.indexOf('--') + 1], code), stack);
        return code;
      }
    }
    return 0;
  });
}
