import { NO_ACCESS_CHANGE } from '../access/access-change-record';
import { ACCESS_CHANGE_FILE } from '../render/configuration-pipeline-yaml';
import { approvalRecordOf, renderApprovalSection } from './approval-record';
import { readJobAccessChange } from './job-access-change';
import { PipelineJobContext } from './pipeline-job-context';

/** Forty zeros: GitLab's "no commit". */
const NO_COMMIT = /^0{40}$/;

/**
 * The merge request's note's approval record ({@link renderApprovalSection}): the review's canonical
 * access change ({@link ACCESS_CHANGE_FILE}; none planned: no change), the merge request
 * (`CI_MERGE_REQUEST_IID`), its head (`CI_MERGE_REQUEST_SOURCE_BRANCH_SHA` in a merged-results pipeline, else `CI_COMMIT_SHA`) and the target commit its plans were computed
 * against (`CI_MERGE_REQUEST_DIFF_BASE_SHA`).
 * Undefined, said in the log, outside a merge request's pipeline (one of the variables unset): a note
 * without its record approves nothing on the default branch.
 */
export function mergeRequestApprovalSection(ctx: PipelineJobContext): string | undefined {
  const env = ctx.env;
  const missing = ['CI_MERGE_REQUEST_IID', 'CI_COMMIT_SHA', 'CI_MERGE_REQUEST_DIFF_BASE_SHA'].filter((v) => (env[v] ?? '') === '' || NO_COMMIT.test(env[v] ?? ''));
  if (missing.length > 0) {
    ctx.log.decide(`no approval record in the note: ${missing.join(', ')} not set (GitLab sets them in a merge request's pipeline); the default branch finds no approval of this change`);
    return undefined;
  }
  const change = readJobAccessChange(ctx.dir) ?? NO_ACCESS_CHANGE;
  // A merged-results pipeline runs on the merge result: the merge request's head is its source branch's commit.
  const head = env.CI_MERGE_REQUEST_SOURCE_BRANCH_SHA || env.CI_COMMIT_SHA!;
  const record = approvalRecordOf(change, Number(env.CI_MERGE_REQUEST_IID), head, env.CI_MERGE_REQUEST_DIFF_BASE_SHA!);
  ctx.log.decide(`the note carries its approval record: !${record.mergeRequest} at ${record.headCommit.slice(0, 12)} against ${record.targetCommit.slice(0, 12)}, ${change.identities.length} identity change(s), ${change.objects.length} object change(s)`);
  return renderApprovalSection(record);
}
