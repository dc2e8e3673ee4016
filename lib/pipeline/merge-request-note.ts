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
  const url = `${target.apiUrl.replace(/\/+$/, '')}/projects/${encodeURIComponent(target.projectId)}/merge_requests/${encodeURIComponent(target.mergeRequestIid)}/notes`;
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers: { 'PRIVATE-TOKEN': target.token, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ body }).toString() });
  } catch (e) {
    throw new Error(`${url}: ${(e as Error).message}${(e as Error & { cause?: Error }).cause ? ` (${(e as Error & { cause: Error }).cause.message})` : ''}`);
  }
  if (!response.ok) {
    const text = (await response.text().catch(() => '')).slice(0, 500).replace(/\s+/g, ' ');
    throw new Error(`${url}: HTTP ${response.status}${text ? `: ${text}` : ''}`);
  }
}
