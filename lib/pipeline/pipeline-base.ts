/**
 * What the synth job compares this commit with, decided from the pipeline's CI variables alone
 * ({@link pipelineBase}): a pure decision, so a person reproduces it from the job's variables.
 */
export type PipelineBase =
  /** A schedule checks every stack for drift: no selection at all. */
  | { readonly kind: 'schedule' }
  /** No commit to compare with: every stack is planned. */
  | { readonly kind: 'none'; readonly why: string }
  /**
   * Compare with `ref`; `fetch` names the branch to fetch from `origin` first (a merge request's
   * target, when GitLab gave no diff base commit).
   */
  | { readonly kind: 'ref'; readonly ref: string; readonly why: string; readonly fetch?: string };

/** GitLab gives forty zeros (or nothing) when there is no previous commit. */
function noCommit(sha: string | undefined): boolean {
  return sha === undefined || !/[^0]/.test(sha);
}

/**
 * The base of the stack selection for a pipeline, from its CI variables:
 *
 * - `schedule`: none (the drift jobs check every stack);
 * - `merge_request_event`: `CI_MERGE_REQUEST_DIFF_BASE_SHA`, the target branch's commit the merge
 *   request's changes are counted from (its default-branch pipeline stored that commit's synthesis),
 *   else `origin/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME` (fetched first);
 * - any other source (a push to the default branch): `CI_COMMIT_BEFORE_SHA`, the commit before the push.
 *
 * Without such a commit (a new branch, a pipeline started by hand: forty zeros), none: every stack is
 * planned (too much is safe, too little is not).
 */
export function pipelineBase(env: Readonly<Record<string, string | undefined>>): PipelineBase {
  const source = env.CI_PIPELINE_SOURCE;
  if (source === 'schedule') return { kind: 'schedule' };
  if (source === 'merge_request_event') {
    const diffBase = env.CI_MERGE_REQUEST_DIFF_BASE_SHA;
    if (!noCommit(diffBase)) return { kind: 'ref', ref: diffBase!, why: 'the merge request\'s diff base (CI_MERGE_REQUEST_DIFF_BASE_SHA)' };
    const target = env.CI_MERGE_REQUEST_TARGET_BRANCH_NAME;
    if (target === undefined || target === '') return { kind: 'none', why: 'no previous commit to compare with: the merge request names no target branch (CI_MERGE_REQUEST_TARGET_BRANCH_NAME) nor diff base' };
    return { kind: 'ref', ref: `origin/${target}`, why: `the merge request's target branch (CI_MERGE_REQUEST_TARGET_BRANCH_NAME=${target})`, fetch: target };
  }
  const before = env.CI_COMMIT_BEFORE_SHA;
  if (noCommit(before)) return { kind: 'none', why: 'no previous commit to compare with' };
  return { kind: 'ref', ref: before!, why: 'the commit before the push (CI_COMMIT_BEFORE_SHA)' };
}

/**
 * What a pipeline's synth job does with the copy of the default branch's synthesis that merge-request
 * pipelines read ({@link sharedSynthesisUse}; docs/pipelines.md §7, "The base from the target branch's
 * pipeline").
 */
export type SharedSynthesisUse =
  /** The protected default branch's pipeline writes its commit's synthesis there, for the merge requests based on it. */
  | { readonly kind: 'write'; readonly why: string }
  /** A merge request's pipeline reads the copy of its diff base commit, verified, before compiling the base. */
  | { readonly kind: 'read'; readonly commit: string; readonly why: string }
  /** Neither. */
  | { readonly kind: 'none'; readonly why: string };

/**
 * Which pipelines write and which read the copy of the default branch's synthesis that merge-request
 * pipelines can read (a cache entry of its own, keyed by commit, shared with unprotected pipelines):
 *
 * - `merge_request_event` with a diff base commit (`CI_MERGE_REQUEST_DIFF_BASE_SHA`): read the copy
 *   of that commit (GitLab keeps protected and unprotected caches apart, so a merge request never
 *   reads the sealed entry its target branch's pipeline stored);
 * - a protected ref's pipeline (`CI_COMMIT_REF_PROTECTED=true`) of the default branch, not a
 *   schedule: write this commit's copy, and never read one: what an unprotected pipeline can write
 *   never reaches a protected pipeline's selection, plan or apply;
 * - any other pipeline: neither.
 */
export function sharedSynthesisUse(env: Readonly<Record<string, string | undefined>>): SharedSynthesisUse {
  const source = env.CI_PIPELINE_SOURCE;
  if (source === 'schedule') return { kind: 'none', why: 'a schedule compares with no base' };
  if (source === 'merge_request_event') {
    const diffBase = env.CI_MERGE_REQUEST_DIFF_BASE_SHA;
    if (noCommit(diffBase)) return { kind: 'none', why: 'the merge request has no diff base commit (CI_MERGE_REQUEST_DIFF_BASE_SHA) whose pipeline\'s copy it could read' };
    return { kind: 'read', commit: diffBase!, why: 'a merge request reads the copy its target branch\'s pipeline wrote of its diff base commit' };
  }
  if (env.CI_COMMIT_REF_PROTECTED !== 'true') return { kind: 'none', why: 'only a protected ref\'s pipeline writes the copy merge requests read (CI_COMMIT_REF_PROTECTED is not true)' };
  const branch = env.CI_COMMIT_BRANCH;
  const defaultBranch = env.CI_DEFAULT_BRANCH;
  if (branch === undefined || defaultBranch === undefined || branch !== defaultBranch) return { kind: 'none', why: 'only the default branch\'s pipeline writes the copy merge requests read' };
  return { kind: 'write', why: 'the protected default branch\'s pipeline writes its commit\'s copy for the merge requests based on it' };
}
