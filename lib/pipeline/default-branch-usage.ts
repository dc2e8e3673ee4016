import * as fs from 'fs';
import * as path from 'path';
import { USAGE_FILE, USAGE_JOB } from '../render/configuration-pipeline-yaml';
import { gitlabBranchArtifactFile } from './gitlab-api';
import { PipelineJobContext } from './pipeline-job-context';

/** Where the merge request's review puts the default branch's usage file it read. */
export const DEFAULT_BRANCH_USAGE_FILE = 'usage-of-default-branch.json';

/**
 * The usage file of the default branch (docs/usage.md §9): {@link USAGE_FILE} of job {@link USAGE_JOB}
 * in the branch's latest successful pipeline, read through the GitLab API with the note token (the
 * protected branch's artifact: a merge request's own pipeline cannot write it), written as
 * {@link DEFAULT_BRANCH_USAGE_FILE} for `access-diff --usage`. Undefined, said in the log, without
 * the note token or the CI variables of the API, or when GitLab has none (the job did not run there,
 * its artifact expired).
 * @throws Error when the API answers otherwise than with the file or 404: the review fails rather
 *   than show a note without the use of the access it removes
 */
export async function defaultBranchUsageFile(ctx: PipelineJobContext): Promise<string | undefined> {
  const env = ctx.env;
  const token = env[ctx.description.noteTokenVariable] ?? '';
  const branch = env.CI_DEFAULT_BRANCH ?? '';
  if (token === '' || branch === '' || (env.CI_API_V4_URL ?? '') === '' || (env.CI_PROJECT_ID ?? '') === '') {
    ctx.log.decide(`no usage file read (${token === '' ? `${ctx.description.noteTokenVariable} is not set` : 'CI_DEFAULT_BRANCH, CI_API_V4_URL or CI_PROJECT_ID is not set'}): the note shows no use of the access it changes`);
    return undefined;
  }
  const text = await gitlabBranchArtifactFile({ apiUrl: env.CI_API_V4_URL!, projectId: env.CI_PROJECT_ID!, token }, branch, USAGE_FILE, USAGE_JOB);
  if (text === undefined) {
    ctx.log.decide(`no ${USAGE_FILE} of ${USAGE_JOB} in ${branch}'s latest successful pipeline (SECRETSTORE_IAC_AUDIT_LOG not set there, or the artifact expired): the note shows no use of the access it changes`);
    return undefined;
  }
  fs.writeFileSync(path.join(ctx.dir, DEFAULT_BRANCH_USAGE_FILE), text);
  ctx.log.decide(`read ${USAGE_FILE} of ${USAGE_JOB} in ${branch}'s latest successful pipeline (GitLab API) as ${DEFAULT_BRANCH_USAGE_FILE}: the note shows the use of the access it removes or narrows`);
  return DEFAULT_BRANCH_USAGE_FILE;
}
