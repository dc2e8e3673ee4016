/**
 * The review jobs (lib/pipeline/pipeline-review-job.ts): the default branch's record of the reviewed
 * plans, the merge request's note, its posting to GitLab's notes API (a local HTTP server here) and
 * the risk-flag gate with its acknowledgement label. `access-diff --plans` itself is a prepared
 * answer (its own tests cover it); the engine is a recording runner.
 */
import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as path from 'path';
import { checkReviewSeal, readReviewedPlans } from '../../../lib/engine/reviewed-plan-check';
import { PipelineReviewRunner, runReviewJob } from '../../../lib/pipeline/pipeline-review-job';
import { jobDirectory, recordingContext } from './pipeline-fixture';

const TOKEN = 'glpat-unit-NOTE-token-0f3a9c';
const REPORT = '## Access diff\n\n| who | path | change |\n|---|---|---|\n| `ci-x` | secret/data/a+b & c=d%20 | **added** read ✓ |\n\n50% done; "quotes" \'too\'\n';
const PLANS = { 'secretstore-iac-plans/app-roles.tfplan': 'PK-a', 'secretstore-iac-plans/app-roles.removals': 'x\n', 'secretstore-iac-plans/ci-access.tfplan': 'PK-c' };

/** An access-diff that records its arguments, writes `flags` risk flags and answers `exitCode` with `stdout`. */
function review(dir: string, exitCode: number, stdout: string, flags = 0) {
  const calls: string[][] = [];
  const runner: PipelineReviewRunner = async (args) => {
    calls.push([...args]);
    const i = args.indexOf('--risk-flag-count');
    if (i >= 0) fs.writeFileSync(path.join(dir, args[i + 1]), `${flags}\n`);
    return { exitCode, stdout };
  };
  return { runner, calls };
}

/** A GitLab notes API answering `status`, recording each request. */
async function notesApi(status: number) {
  const received: { url?: string; token?: string | string[]; body: URLSearchParams }[] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      received.push({ url: req.url, token: req.headers['private-token'], body: new URLSearchParams(data) });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status < 300 ? '{"id":1}' : '{"message":"403 Forbidden"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v4`;
  return { url, received, close: () => new Promise((r) => server.close(r)) };
}

describe('default branch', () => {
  it('initialises each planned stack, then records the review of the saved plans in reviewed-plans.json, shown in the log', async () => {
    const dir = jobDirectory(PLANS);
    const r = recordingContext(dir);
    const diff = review(dir, 1, '{"plans":[{"stack":"app-roles"},{"stack":"ci-access"}]}');
    expect(await runReviewJob('default-branch', r.ctx, diff.runner)).toEqual({ exitCode: 0, stacks: ['app-roles', 'ci-access'] });
    expect(r.callLines()).toEqual(['tf app-roles -- init -input=false', 'tf ci-access -- init -input=false']);
    expect(diff.calls).toEqual([['--plans', 'secretstore-iac-plans', '--format', 'json', '--access-change', 'access-change.json']]);
    expect(fs.readFileSync(path.join(dir, 'reviewed-plans.json'), 'utf8')).toBe('{"plans":[{"stack":"app-roles"},{"stack":"ci-access"}]}\n');
    expect(r.lines).toContain('{"plans":[{"stack":"app-roles"},{"stack":"ci-access"}]}');
  });

  it('with SECRETSTORE_IAC_REVIEW_SECRET (protected, masked), reviewed-plans.json is sealed for this pipeline and commit, and an apply verifies it; without it, the log says it is not sealed (issue 45)', async () => {
    const plans = '{"plans":[{"stack":"ci-access","file":"secretstore-iac-plans/ci-access.tfplan","sha256":"' + 'c'.repeat(64) + '"}]}';
    const env = { SECRETSTORE_IAC_REVIEW_SECRET: 'protected secret', CI_PIPELINE_ID: '77', CI_COMMIT_SHA: 'd'.repeat(40) };
    const dir = jobDirectory(PLANS);
    const r = recordingContext(dir, env);
    expect((await runReviewJob('default-branch', r.ctx, review(dir, 0, plans).runner)).exitCode).toBe(0);
    const file = path.join(dir, 'reviewed-plans.json');
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).seal).toEqual({ hmac: expect.stringMatching(/^hmac-sha256:/), pipeline: '77', commit: env.CI_COMMIT_SHA });
    expect(fs.readFileSync(file, 'utf8')).not.toContain('protected secret');
    expect(r.lines.join('\n')).toContain('reviewed-plans.json is sealed with SECRETSTORE_IAC_REVIEW_SECRET (HMAC-SHA256, this pipeline and commit)');
    expect(checkReviewSeal('ci-access', file, readReviewedPlans(file), env)).toContain('its seal verifies');
    const unsealed = jobDirectory(PLANS);
    const u = recordingContext(unsealed, {});
    await runReviewJob('default-branch', u.ctx, review(unsealed, 0, plans).runner);
    expect(fs.readFileSync(path.join(unsealed, 'reviewed-plans.json'), 'utf8')).toBe(`${plans}\n`);
    expect(u.lines.join('\n')).toContain('reviewed-plans.json is not sealed (SECRETSTORE_IAC_REVIEW_SECRET is not set');
  });

  it('an error of the review (exit 3) fails the job: no review, no apply', async () => {
    const dir = jobDirectory(PLANS);
    const r = recordingContext(dir);
    expect((await runReviewJob('default-branch', r.ctx, review(dir, 3, 'cannot show the plan').runner)).exitCode).toBe(3);
  });

  it('without a saved plan (nothing selected): records none, so that no apply applies one', async () => {
    const dir = jobDirectory({});
    const r = recordingContext(dir);
    const diff = review(dir, 0, '');
    expect((await runReviewJob('default-branch', r.ctx, diff.runner)).exitCode).toBe(0);
    expect(diff.calls).toEqual([]);
    expect(fs.readFileSync(path.join(dir, 'reviewed-plans.json'), 'utf8')).toBe('{"plans":[]}\n');
  });
});

describe('merge request', () => {
  it('the note: the review of the saved plans, then the synth job\'s changed-stacks.md; token set: posted with PRIVATE-TOKEN, the token printed nowhere', async () => {
    const dir = jobDirectory({ ...PLANS, 'changed-stacks.md': '### Stacks planned\n\n| a |\n' });
    const api = await notesApi(201);
    try {
      const r = recordingContext(dir, { SECRETSTORE_IAC_NOTE_TOKEN: TOKEN, CI_API_V4_URL: api.url, CI_PROJECT_ID: '42', CI_MERGE_REQUEST_IID: '7' });
      const diff = review(dir, 0, REPORT);
      expect((await runReviewJob('merge-request', r.ctx, diff.runner)).exitCode).toBe(0);
      expect(diff.calls).toEqual([['--plans', 'secretstore-iac-plans', '--risk-flag-count', 'access-risk-flags.txt', '--access-change', 'access-change.json']]);
      const note = `${REPORT}\n### Stacks planned\n\n| a |\n`;
      expect(fs.readFileSync(path.join(dir, 'access-diff.md'), 'utf8')).toBe(note);
      expect(api.received).toEqual([{ url: '/api/v4/projects/42/merge_requests/7/notes', token: TOKEN, body: new URLSearchParams({ body: note }) }]);
      expect(r.lines).toContain('secretstore-iac pipeline test: the note is posted to !7');
      expect(JSON.stringify([r.lines, r.ctx.log.decisions])).not.toContain(TOKEN);
    } finally {
      await api.close();
    }
  });

  it('a failed post fails the job (an error: the CLI\'s exit 3), naming the status and the token variable, never the token', async () => {
    const dir = jobDirectory(PLANS);
    const api = await notesApi(403);
    try {
      const r = recordingContext(dir, { SECRETSTORE_IAC_NOTE_TOKEN: TOKEN, CI_API_V4_URL: api.url, CI_PROJECT_ID: '42', CI_MERGE_REQUEST_IID: '7' });
      const error: Error = await runReviewJob('merge-request', r.ctx, review(dir, 0, REPORT).runner).then(() => new Error('posted'), (e: Error) => e);
      const last = error.message;
      expect(last).toContain('posting the note to !7 failed (');
      expect(last).toContain('HTTP 403');
      expect(last).toContain('check SECRETSTORE_IAC_NOTE_TOKEN (a project access token with scope api');
      expect(JSON.stringify([r.lines, last])).not.toContain(TOKEN);
    } finally {
      await api.close();
    }
  });

  it('token unset: no request, the note in the log and the artifact, the job passes', async () => {
    const dir = jobDirectory(PLANS);
    const r = recordingContext(dir, {});
    expect((await runReviewJob('merge-request', r.ctx, review(dir, 0, REPORT).runner)).exitCode).toBe(0);
    expect(r.lines).toContain(REPORT.trimEnd());
    expect(r.lines).toContain('secretstore-iac pipeline test: SECRETSTORE_IAC_NOTE_TOKEN is not set: the note is not posted; it is in the job log above and in the artifact access-diff.md');
  });

  it('no saved plan: the note says nothing is planned, no risk flag, the diff is not run', async () => {
    const dir = jobDirectory({});
    const r = recordingContext(dir, {});
    const diff = review(dir, 0, '');
    expect((await runReviewJob('merge-request', r.ctx, diff.runner)).exitCode).toBe(0);
    expect(diff.calls).toEqual([]);
    expect(fs.readFileSync(path.join(dir, 'access-diff.md'), 'utf8')).toContain('No stack is planned (no saved plan in this pipeline)');
    expect(fs.readFileSync(path.join(dir, 'access-risk-flags.txt'), 'utf8')).toBe('0\n');
  });

  it('an error of the review fails the job with its code, no note posted', async () => {
    const dir = jobDirectory(PLANS);
    const r = recordingContext(dir, {});
    expect((await runReviewJob('merge-request', r.ctx, review(dir, 3, 'boom').runner)).exitCode).toBe(3);
  });

  describe('risk flags fail the job unless acknowledged by the label or the variable', () => {
    it.each([
      ['no acknowledgement', {}, 'risk-flags', '2 risk flag(s) in the access diff: review them, then add the label access-risk-acknowledged to the merge request (or set SECRETSTORE_IAC_ACCEPT_RISK=true) and re-run this job'],
      ['another label', { CI_MERGE_REQUEST_LABELS: 'access-risk-acknowledged-not,x' }, 'risk-flags', '2 risk flag(s) in the access diff'],
      ['the label among others', { CI_MERGE_REQUEST_LABELS: 'x,access-risk-acknowledged,y' }, undefined, '2 risk flag(s) acknowledged by the label access-risk-acknowledged'],
      ['the variable', { SECRETSTORE_IAC_ACCEPT_RISK: 'true' }, undefined, '2 risk flag(s) acknowledged by SECRETSTORE_IAC_ACCEPT_RISK=true'],
      ['the variable, not true', { SECRETSTORE_IAC_ACCEPT_RISK: 'yes' }, 'risk-flags', '2 risk flag(s) in the access diff'],
    ])('%s', async (_, env, attention, line) => {
      const dir = jobDirectory(PLANS);
      const r = recordingContext(dir, env);
      const result = await runReviewJob('merge-request', r.ctx, review(dir, 1, REPORT, 2).runner);
      expect([result.exitCode, result.attention]).toEqual([0, attention]);
      expect(r.lines.at(-1)).toContain(line);
    });
  });
});
