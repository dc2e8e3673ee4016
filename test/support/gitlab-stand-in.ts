/**
 * A local stand-in for exactly the GitLab REST API v4 endpoints the configuration pipeline calls, on
 * 127.0.0.1, following GitLab's documented request and response shapes:
 * - `GET /user` (the token's user; 401 for an unknown token);
 * - `GET /projects/:id/merge_requests/:iid/notes` (`sort`, `order_by=created_at`, `per_page`, `page`;
 *   `X-Next-Page`, `X-Page`, `X-Per-Page`, `X-Total` headers);
 * - `POST /projects/:id/merge_requests/:iid/notes` (`body`, form-encoded or JSON; 201 with the note);
 * - `PUT /projects/:id/merge_requests/:iid/notes/:note_id` (`body`; only the note's author: 403 otherwise);
 * - `GET /projects/:id/repository/commits/:sha/merge_requests` (the merge requests holding the commit,
 *   or merged by it as their merge or squash commit);
 * - `POST /projects/:id/repository/commits/:sha/comments` (`note`; 201);
 * - `GET /projects/:id/jobs/artifacts/:ref_name/raw/*artifact_path?job=name` (one file of the job's
 *   artifacts in the branch's latest successful pipeline, as {@link GitLabStandIn.setBranchArtifact}
 *   put it; 404 `{"message":"404 Not found"}` otherwise, as GitLab answers).
 * Anything else is 404, and is recorded: a test can assert which endpoints were called.
 */
import * as http from 'http';
import { AddressInfo } from 'net';

/** A user of the stand-in and its token. */
export interface StandInUser {
  readonly id: number;
  readonly username: string;
  readonly token: string;
}

/** A merge request as GitLab answers it, with the commits it holds (not in GitLab's answer). */
export interface StandInMergeRequest {
  iid: number;
  state: 'opened' | 'merged' | 'closed';
  target_branch: string;
  sha: string;
  merge_commit_sha: string | null;
  squash_commit_sha: string | null;
  /** The merge request's commits (GitLab knows them; its answer does not list them). */
  commits: string[];
}

/** A note as GitLab answers it. */
export interface StandInNote {
  id: number;
  body: string;
  author: { id: number; username: string; name: string };
  created_at: string;
  updated_at: string;
  system: boolean;
  noteable_type: 'MergeRequest';
  noteable_iid: number;
}

/** One request the stand-in received (the token never recorded). */
export interface StandInRequest {
  readonly method: string;
  readonly path: string;
  readonly user?: string;
  readonly status: number;
}

export class GitLabStandIn {
  readonly mergeRequests = new Map<number, StandInMergeRequest>();
  readonly notes = new Map<number, StandInNote[]>();
  readonly commitComments = new Map<string, { note: string; author: string }[]>();
  readonly requests: StandInRequest[] = [];
  /** Artifact files by `ref`, job and path: what the branch's latest successful pipeline keeps. */
  private readonly branchArtifacts = new Map<string, string>();
  private nextNote = 1;
  private clock = Date.UTC(2026, 11, 1, 12, 0, 0);

  private constructor(
    private readonly server: http.Server,
    /** `CI_API_V4_URL`. */
    readonly apiUrl: string,
    readonly projectId: string,
    private readonly users: readonly StandInUser[],
  ) {}

  /** Starts it for project `projectId` with these users. */
  static async start(projectId: string, users: readonly StandInUser[]): Promise<GitLabStandIn> {
    let standIn: GitLabStandIn | undefined;
    const server = http.createServer((req, res) => standIn!.handle(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    standIn = new GitLabStandIn(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v4`, projectId, users);
    return standIn;
  }

  /** Stops the server. */
  stop(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  /** Puts `text` as the file `artifactPath` of job `job` in the latest successful pipeline of branch `ref`; undefined removes it. */
  setBranchArtifact(ref: string, job: string, artifactPath: string, text: string | undefined): void {
    const key = [ref, job, artifactPath].join('\0');
    if (text === undefined) this.branchArtifacts.delete(key);
    else this.branchArtifacts.set(key, text);
  }

  /** Adds a note as `username` (a person posting by hand, or the bot). */
  addNote(iid: number, username: string, body: string): StandInNote {
    const user = this.users.find((u) => u.username === username)!;
    const at = new Date((this.clock += 1000)).toISOString();
    const note: StandInNote = { id: this.nextNote++, body, author: { id: user.id, username: user.username, name: user.username }, created_at: at, updated_at: at, system: false, noteable_type: 'MergeRequest', noteable_iid: iid };
    this.notes.set(iid, [...(this.notes.get(iid) ?? []), note]);
    return note;
  }

  /** The bodies of the notes of `iid`, oldest first. */
  noteBodies(iid: number): string[] {
    return (this.notes.get(iid) ?? []).map((n) => n.body);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const token = req.headers['private-token'];
      const user = this.users.find((u) => u.token === token);
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        this.requests.push({ method: req.method ?? '', path: url.pathname, ...(user ? { user: user.username } : {}), status });
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      if (user === undefined) return send(401, { message: '401 Unauthorized' });
      const form = (): Record<string, string> => {
        if ((req.headers['content-type'] ?? '').includes('application/json')) return JSON.parse(data || '{}');
        return Object.fromEntries(new URLSearchParams(data));
      };
      const path = url.pathname.replace(/^\/api\/v4/, '');
      if (req.method === 'GET' && path === '/user') return send(200, { id: user.id, username: user.username, name: user.username, state: 'active' });
      const project = /^\/projects\/([^/]+)(\/.*)$/.exec(path);
      if (project === null || decodeURIComponent(project[1]) !== this.projectId) return send(404, { message: '404 Project Not Found' });
      const rest = project[2];
      let m = /^\/merge_requests\/(\d+)\/notes$/.exec(rest);
      if (m !== null) {
        const iid = Number(m[1]);
        if (!this.mergeRequests.has(iid)) return send(404, { message: '404 Not found' });
        if (req.method === 'POST') {
          const body = form().body;
          if (typeof body !== 'string' || body === '') return send(400, { message: { body: ["can't be blank"] } });
          return send(201, this.addNote(iid, user.username, body));
        }
        if (req.method !== 'GET') return send(405, { message: '405 Method Not Allowed' });
        const all = [...(this.notes.get(iid) ?? [])];
        if (url.searchParams.get('sort') !== 'asc') all.reverse();
        const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? '20'));
        const page = Number(url.searchParams.get('page') ?? '1');
        const slice = all.slice((page - 1) * perPage, page * perPage);
        const next = page * perPage < all.length ? String(page + 1) : '';
        return send(200, slice, { 'x-next-page': next, 'x-page': String(page), 'x-per-page': String(perPage), 'x-total': String(all.length) });
      }
      m = /^\/merge_requests\/(\d+)\/notes\/(\d+)$/.exec(rest);
      if (m !== null && req.method === 'PUT') {
        const note = (this.notes.get(Number(m[1])) ?? []).find((n) => n.id === Number(m![2]));
        if (note === undefined) return send(404, { message: '404 Not found' });
        if (note.author.id !== user.id) return send(403, { message: '403 Forbidden' });
        note.body = form().body;
        note.updated_at = new Date((this.clock += 1000)).toISOString();
        return send(200, note);
      }
      m = /^\/repository\/commits\/([^/]+)\/merge_requests$/.exec(rest);
      if (m !== null && req.method === 'GET') {
        const sha = decodeURIComponent(m[1]);
        const found = [...this.mergeRequests.values()].filter((mr) => mr.commits.includes(sha) || mr.merge_commit_sha === sha || mr.squash_commit_sha === sha);
        return send(200, found.map(({ commits: _c, ...mr }) => ({ ...mr, project_id: Number(this.projectId), title: `merge request ${mr.iid}` })));
      }
      m = /^\/repository\/commits\/([^/]+)\/comments$/.exec(rest);
      if (m !== null && req.method === 'POST') {
        const sha = decodeURIComponent(m[1]);
        const note = form().note;
        if (typeof note !== 'string' || note === '') return send(400, { message: { note: ["can't be blank"] } });
        this.commitComments.set(sha, [...(this.commitComments.get(sha) ?? []), { note, author: user.username }]);
        return send(201, { note, author: { id: user.id, username: user.username } });
      }
      m = /^\/jobs\/artifacts\/([^/]+)\/raw\/(.+)$/.exec(rest);
      if (m !== null && req.method === 'GET') {
        const text = this.branchArtifacts.get([decodeURIComponent(m[1]), url.searchParams.get('job') ?? '', m[2].split('/').map(decodeURIComponent).join('/')].join('\0'));
        if (text === undefined) return send(404, { message: '404 Not found' });
        this.requests.push({ method: req.method, path: url.pathname, user: user.username, status: 200 });
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return void res.end(text);
      }
      return send(404, { message: '404 Not Found' });
    });
  }
}
