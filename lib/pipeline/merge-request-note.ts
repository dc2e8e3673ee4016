import { gitlabPostMergeRequestNote } from './gitlab-api';

/** Where and as whom the review job posts its note: GitLab's predefined variables and the token. */
export interface MergeRequestNoteTarget {
  /** `CI_API_V4_URL`. */
  readonly apiUrl: string;
  /** `CI_PROJECT_ID`. */
  readonly projectId: string;
  /** `CI_MERGE_REQUEST_IID`. */
  readonly mergeRequestIid: string;
  /** A project access token with scope `api` (a header of the request, never in a message). */
  readonly token: string;
}

/**
 * Posts `body` as a note of the merge request (`POST /projects/:id/merge_requests/:iid/notes`, the
 * token in `PRIVATE-TOKEN`, the body form-encoded).
 * @throws Error naming the status or the failure (never the token) when GitLab does not accept it
 */
export async function postMergeRequestNote(target: MergeRequestNoteTarget, body: string): Promise<void> {
  await gitlabPostMergeRequestNote({ apiUrl: target.apiUrl, projectId: target.projectId, token: target.token }, target.mergeRequestIid, body);
}
