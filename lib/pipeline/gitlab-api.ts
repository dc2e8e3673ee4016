/**
 * The GitLab REST API calls the configuration pipeline makes, with a token in `PRIVATE-TOKEN`
 * (never in a message), following GitLab's documented request and response shapes (REST API v4):
 * `GET /user`, the notes of a merge request, the merge requests of a commit, posting a note to
 * a merge request or a comment to a commit, and one file of a branch's latest job artifacts. Only
 * the fields the pipeline reads are typed.
 */

/** Where the API is and as whom the pipeline calls it. */
export interface GitLabApiTarget {
  /** `CI_API_V4_URL`. */
  readonly apiUrl: string;
  /** `CI_PROJECT_ID`. */
  readonly projectId: string;
  /** A project access token with scope `api`. */
  readonly token: string;
}

/** A user (`GET /user`, a note's `author`). */
export interface GitLabUser {
  readonly id: number;
  readonly username: string;
}

/** A note of a merge request (`GET /projects/:id/merge_requests/:iid/notes`). */
export interface GitLabNote {
  readonly id: number;
  readonly body: string;
  readonly author: GitLabUser;
  readonly created_at: string;
  readonly updated_at?: string;
  /** True for GitLab's own notes (a commit added, a label), which nobody writes. */
  readonly system: boolean;
}

/** A merge request (`GET /projects/:id/repository/commits/:sha/merge_requests`). */
export interface GitLabMergeRequest {
  readonly iid: number;
  readonly state: string;
  readonly target_branch: string;
  /** The merge request's head commit. */
  readonly sha: string;
  readonly merge_commit_sha?: string | null;
  readonly squash_commit_sha?: string | null;
}

/** Notes are read 100 a page (GitLab's most), following `X-Next-Page`, at most this many pages. */
const MAX_PAGES = 50;

/**
 * One request to the API: the answer's status, headers and text, or an Error naming the URL (never
 * the token) when none came. `form`: the body, form-encoded.
 */
async function send(target: GitLabApiTarget, method: 'GET' | 'POST', route: string, form?: Record<string, string>): Promise<{ url: string; response: Response; text: string }> {
  const url = `${target.apiUrl.replace(/\/+$/, '')}${route}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { 'PRIVATE-TOKEN': target.token, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
  } catch (e) {
    throw new Error(`${url}: ${(e as Error).message}${(e as Error & { cause?: Error }).cause ? ` (${(e as Error & { cause: Error }).cause.message})` : ''}`);
  }
  return { url, response, text: await response.text().catch(() => '') };
}

/** The Error of an answer that is not a success: the URL, the status and the start of the body. */
function failed(url: string, response: Response, text: string): Error {
  const shown = text.slice(0, 500).replace(/\s+/g, ' ');
  return new Error(`${url}: HTTP ${response.status}${shown ? `: ${shown}` : ''}`);
}

/**
 * One request to the API: JSON back, or an Error naming the URL and the status (never the token).
 * `form`: the body, form-encoded.
 */
async function request(target: GitLabApiTarget, method: 'GET' | 'POST', route: string, form?: Record<string, string>): Promise<{ json: unknown; next?: string }> {
  const { url, response, text } = await send(target, method, route, form);
  if (!response.ok) throw failed(url, response, text);
  let json: unknown;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    throw new Error(`${url}: the answer is not JSON`);
  }
  const next = response.headers.get('x-next-page') ?? '';
  return { json, ...(next !== '' ? { next } : {}) };
}

const project = (target: GitLabApiTarget) => `/projects/${encodeURIComponent(target.projectId)}`;

/** `GET /user`: the token's own user. */
export async function gitlabCurrentUser(target: GitLabApiTarget): Promise<GitLabUser> {
  const { json } = await request(target, 'GET', '/user');
  const user = json as GitLabUser;
  if (typeof user?.id !== 'number' || typeof user.username !== 'string') throw new Error(`${target.apiUrl}/user: not a user (no id and username)`);
  return { id: user.id, username: user.username };
}

/** Every note of merge request `iid`, oldest first (`sort=asc&order_by=created_at`, all pages). */
export async function gitlabMergeRequestNotes(target: GitLabApiTarget, iid: number): Promise<GitLabNote[]> {
  const notes: GitLabNote[] = [];
  let page = '1';
  for (let n = 0; n < MAX_PAGES; n++) {
    const { json, next } = await request(target, 'GET', `${project(target)}/merge_requests/${iid}/notes?sort=asc&order_by=created_at&per_page=100&page=${encodeURIComponent(page)}`);
    if (!Array.isArray(json)) throw new Error(`the notes of !${iid}: not a list`);
    for (const n of json as GitLabNote[]) {
      if (typeof n?.id !== 'number' || typeof n.body !== 'string' || typeof n.author?.id !== 'number') throw new Error(`the notes of !${iid}: a note without id, body or author`);
      notes.push({ id: n.id, body: n.body, author: { id: n.author.id, username: String(n.author.username) }, created_at: String(n.created_at), ...(n.updated_at ? { updated_at: String(n.updated_at) } : {}), system: n.system === true });
    }
    if (next === undefined) return notes;
    page = next;
  }
  throw new Error(`the notes of !${iid}: more than ${MAX_PAGES * 100} notes`);
}

/** The merge requests GitLab associates with commit `sha` (`GET .../repository/commits/:sha/merge_requests`). */
export async function gitlabCommitMergeRequests(target: GitLabApiTarget, sha: string): Promise<GitLabMergeRequest[]> {
  const { json } = await request(target, 'GET', `${project(target)}/repository/commits/${encodeURIComponent(sha)}/merge_requests`);
  if (!Array.isArray(json)) throw new Error(`the merge requests of ${sha}: not a list`);
  return (json as GitLabMergeRequest[]).map((m) => {
    if (typeof m?.iid !== 'number' || typeof m.sha !== 'string') throw new Error(`the merge requests of ${sha}: one without iid or sha`);
    return { iid: m.iid, state: String(m.state), target_branch: String(m.target_branch), sha: m.sha, merge_commit_sha: m.merge_commit_sha ?? null, squash_commit_sha: m.squash_commit_sha ?? null };
  });
}

/** Posts `body` as a note of merge request `iid` (`POST .../merge_requests/:iid/notes`, form-encoded). */
export async function gitlabPostMergeRequestNote(target: GitLabApiTarget, iid: string, body: string): Promise<void> {
  await request(target, 'POST', `${project(target)}/merge_requests/${encodeURIComponent(iid)}/notes`, { body });
}

/** Posts `note` as a comment of commit `sha` (`POST .../repository/commits/:sha/comments`, form-encoded). */
export async function gitlabPostCommitComment(target: GitLabApiTarget, sha: string, note: string): Promise<void> {
  await request(target, 'POST', `${project(target)}/repository/commits/${encodeURIComponent(sha)}/comments`, { note });
}

/**
 * One file of the artifacts of job `job` in the latest successful pipeline of branch `ref`
 * (`GET /projects/:id/jobs/artifacts/:ref_name/raw/*artifact_path?job=name`, GitLab's "download a
 * single artifact file from a specific tag or branch"): its text, or undefined when GitLab has none
 * (404: no such job in that pipeline, or its artifacts expired).
 * @throws Error naming the URL and the status (never the token) for any other answer
 */
export async function gitlabBranchArtifactFile(target: GitLabApiTarget, ref: string, artifactPath: string, job: string): Promise<string | undefined> {
  const route = `${project(target)}/jobs/artifacts/${encodeURIComponent(ref)}/raw/${artifactPath.split('/').map(encodeURIComponent).join('/')}?job=${encodeURIComponent(job)}`;
  const { url, response, text } = await send(target, 'GET', route);
  if (response.status === 404) return undefined;
  if (!response.ok) throw failed(url, response, text);
  return text;
}
