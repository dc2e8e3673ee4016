/**
 * Issue 47, "in the pipeline" (docs/usage.md §9): the usage job writes the usage file and its
 * picture from the audit log the operators make available (a path on the runner, an https:// URL),
 * as the real `usage` command computes them; the merge request's review reads the default branch's
 * usage file through GitLab's API (a local stand-in of exactly that endpoint) and gives it to
 * `access-diff --usage`; without one it says so; an API that fails fails the review.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as path from 'path';
import * as zlib from 'zlib';
import { runCli } from '../../../lib/cli/run-cli';
import { PipelineReviewRunner, runReviewJob } from '../../../lib/pipeline/pipeline-review-job';
import { PipelineNarrowRunner, PipelineUsageRunner, runUsageJob } from '../../../lib/pipeline/pipeline-usage-job';
import { NARROWING_FILE, NARROWING_KEEP_VARIABLE, NARROWING_PATCH_FILE, NARROWING_RETIRE_IDLE_VARIABLE, USAGE_FILE, USAGE_JOB } from '../../../lib/render/configuration-pipeline-yaml';
import { evaluateConfigSource, NARROWING_RETIRE_SOURCE, NARROWING_SOURCE, NARROWING_USED, reportWithUse, retireReport, synthesizedRules } from '../../support/narrowing-config';
import { GitLabStandIn } from '../../support/gitlab-stand-in';
import { ACCESS_FIXTURES, REPO_ROOT } from '../../support/paths';
import { jobDirectory, recordingContext } from './pipeline-fixture';

const LOG = path.join(REPO_ROOT, 'test', 'fixtures', 'usage', 'openbao-audit.log');
const BASE = path.join(ACCESS_FIXTURES, 'base');
const BOT = { id: 90, username: 'project_42_bot', token: 'glpat-unit-bot-usage' };

/** The real `usage` command, as the pipeline command runs it, in `dir`. */
const usageIn =
  (dir: string, calls: string[][] = []): PipelineUsageRunner =>
  async (args) => {
    calls.push([...args]);
    const out: string[] = [];
    const exitCode = await runCli(['usage', ...args], { env: {}, cwd: dir, isTerminal: false, stdout: (l) => out.push(l), stderr: () => undefined });
    return { exitCode, stdout: out.length > 0 ? `${out.join('\n')}\n` : '' };
  };

/** What `usage BASE --log LOG --format json` answers, without the time of the run. */
async function expectedReport(dir: string): Promise<unknown> {
  const r = await usageIn(dir)([BASE, '--log', LOG, '--format', 'json']);
  return withoutReadAt(JSON.parse(r.stdout));
}
const withoutReadAt = (report: any) => ({ ...report, counts: { ...report.counts, readAt: 'T' } });

describe('the usage job: the usage file from the audit log the variable names', () => {
  it('a path on the runner: usage.json is the usage command\'s report of the configuration, usage.svg its picture; the counts in the log', async () => {
    const dir = jobDirectory({});
    fs.copyFileSync(LOG, path.join(dir, 'audit.log'));
    const r = recordingContext(dir, { SECRETSTORE_IAC_AUDIT_LOG: 'audit.log' });
    const calls: string[][] = [];
    expect(await runUsageJob({ ...r.ctx, outdir: BASE }, usageIn(dir, calls))).toEqual({ exitCode: 0, stacks: [] });
    expect(calls).toEqual([[BASE, '--log', 'audit.log', '--format', 'json', '--matrix', 'usage.svg']]);
    expect(withoutReadAt(JSON.parse(fs.readFileSync(path.join(dir, USAGE_FILE), 'utf8')))).toEqual(await expectedReport(dir));
    expect(fs.readFileSync(path.join(dir, 'usage.svg'), 'utf8')).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(r.lines.join('\n')).toMatch(/\d+ identities: \d+ grants used, \d+ never used \(least-privilege candidates\), \d+ denied requests, \d+ failed logins/);
  });

  it('https:// (here a local http server) URLs, rotated and gzip-ed: downloaded, read as one log; the query string (a signed URL) never printed', async () => {
    const text = fs.readFileSync(LOG, 'utf8').split('\n');
    const half = Math.floor(text.length / 2);
    const parts: Record<string, Buffer> = { '/logs/audit.log.1.gz': zlib.gzipSync(text.slice(0, half).join('\n') + '\n'), '/logs/audit.log': Buffer.from(text.slice(half).join('\n')) };
    const server = http.createServer((req, res) => {
      const body = parts[new URL(req.url ?? '/', 'http://x').pathname];
      res.writeHead(body ? 200 : 404);
      res.end(body ?? '');
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      const at = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const dir = jobDirectory({});
      const r = recordingContext(dir, { SECRETSTORE_IAC_AUDIT_LOG: `${at}/logs/audit.log.1.gz?X-Signature=s3cr3t ${at}/logs/audit.log`, SECRETSTORE_IAC_USAGE_SINCE: '2000-01-01' });
      expect((await runUsageJob({ ...r.ctx, outdir: BASE }, usageIn(dir))).exitCode).toBe(0);
      const whole = withoutReadAt(JSON.parse(fs.readFileSync(path.join(dir, USAGE_FILE), 'utf8')));
      const expected = (await expectedReport(dir)) as any;
      expect({ ...whole, window: {} }).toEqual({ ...expected, window: {}, counts: { ...expected.counts, lines: whole.counts.lines } });
      expect(whole.window.since).toBe('2000-01-01T00:00:00.000Z');
      expect(r.lines.join('\n')).not.toContain('s3cr3t');
      const missing = recordingContext(jobDirectory({}), { SECRETSTORE_IAC_AUDIT_LOG: `${at}/logs/none.log` });
      await expect(runUsageJob({ ...missing.ctx, outdir: BASE }, usageIn(missing.ctx.dir))).rejects.toThrow(`SECRETSTORE_IAC_AUDIT_LOG: ${at}/logs/none.log: HTTP 404`);
    } finally {
      await new Promise((ok) => server.close(ok));
    }
    await expect(runUsageJob(recordingContext(jobDirectory({}), { SECRETSTORE_IAC_AUDIT_LOG: 'http://logs.example.com/audit.log' }).ctx, usageIn('/'))).rejects.toThrow('plain http to another host; give an https:// URL');
  });

  it('without the variable: no usage file, said in the log; a log that cannot be read fails the job with usage\'s exit code', async () => {
    const dir = jobDirectory({});
    fs.writeFileSync(path.join(dir, USAGE_FILE), 'an older one');
    const r = recordingContext(dir, {});
    expect(await runUsageJob({ ...r.ctx, outdir: BASE }, usageIn(dir))).toEqual({ exitCode: 0, stacks: [] });
    expect(fs.existsSync(path.join(dir, USAGE_FILE))).toBe(false);
    expect(r.lines.join('\n')).toContain('SECRETSTORE_IAC_AUDIT_LOG is not set: no audit log, no usage file');
    const absent = recordingContext(dir, { SECRETSTORE_IAC_AUDIT_LOG: 'no-such.log' });
    expect((await runUsageJob({ ...absent.ctx, outdir: BASE }, usageIn(dir))).exitCode).toBe(2);
    expect(fs.existsSync(path.join(dir, USAGE_FILE))).toBe(false);
  });
});

describe("the merge request's review reads the default branch's usage file", () => {
  let gitlab: GitLabStandIn;
  beforeEach(async () => {
    gitlab = await GitLabStandIn.start('4242', [BOT]);
  });
  afterEach(() => gitlab.stop());
  const env = () => ({ SECRETSTORE_IAC_NOTE_TOKEN: BOT.token, CI_API_V4_URL: gitlab.apiUrl, CI_PROJECT_ID: '4242', CI_DEFAULT_BRANCH: 'main' });
  const diff = (dir: string) => {
    const calls: string[][] = [];
    const runner: PipelineReviewRunner = async (args) => {
      calls.push([...args]);
      fs.writeFileSync(path.join(dir, 'access-risk-flags.txt'), '0\n');
      return { exitCode: 0, stdout: '## Access changes: none\n' };
    };
    return { runner, calls };
  };

  it('the file of the usage job in main\'s latest successful pipeline is given to access-diff --usage, byte for byte', async () => {
    gitlab.setBranchArtifact('main', USAGE_JOB, USAGE_FILE, '{"format":"secretstore-iac-usage"}\n');
    const dir = jobDirectory({ 'secretstore-iac-plans/app-roles.tfplan': 'PK' });
    const r = recordingContext(dir, env());
    const d = diff(dir);
    // The note is posted to no merge request here (no IID); only the read matters.
    await runReviewJob('merge-request', r.ctx, d.runner).catch(() => undefined);
    expect(d.calls).toEqual([['--plans', 'secretstore-iac-plans', '--risk-flag-count', 'access-risk-flags.txt', '--access-change', 'access-change.json', '--usage', 'usage-of-default-branch.json']]);
    expect(fs.readFileSync(path.join(dir, 'usage-of-default-branch.json'), 'utf8')).toBe('{"format":"secretstore-iac-usage"}\n');
    expect(gitlab.requests.filter((q) => q.path.includes('/jobs/artifacts/'))).toEqual([{ method: 'GET', path: '/api/v4/projects/4242/jobs/artifacts/main/raw/usage.json', user: BOT.username, status: 200 }]);
    expect(r.lines.join('\n')).toContain("read usage.json of secretstore-iac-usage in main's latest successful pipeline (GitLab API) as usage-of-default-branch.json");
  });

  it('none there (404), or no note token: the review runs without --usage and says why', async () => {
    for (const variables of [env(), { ...env(), SECRETSTORE_IAC_NOTE_TOKEN: '' }]) {
      const dir = jobDirectory({ 'secretstore-iac-plans/app-roles.tfplan': 'PK' });
      const r = recordingContext(dir, variables);
      const d = diff(dir);
      await runReviewJob('merge-request', r.ctx, d.runner).catch(() => undefined);
      expect(d.calls[0]).not.toContain('--usage');
      expect(r.lines.join('\n')).toMatch(variables.SECRETSTORE_IAC_NOTE_TOKEN === '' ? /no usage file read \(SECRETSTORE_IAC_NOTE_TOKEN is not set\)/ : /no usage\.json of secretstore-iac-usage in main's latest successful pipeline/);
    }
  });

  it('an API that answers otherwise (401: a revoked token) fails the review: no note without the use of what it removes', async () => {
    const dir = jobDirectory({ 'secretstore-iac-plans/app-roles.tfplan': 'PK' });
    const r = recordingContext(dir, { ...env(), SECRETSTORE_IAC_NOTE_TOKEN: 'revoked' });
    const d = diff(dir);
    await expect(runReviewJob('merge-request', r.ctx, d.runner)).rejects.toThrow(/jobs\/artifacts\/main\/raw\/usage\.json\?job=secretstore-iac-usage: HTTP 401/);
    expect(d.calls).toEqual([]);
  });
});

describe('the usage job: the narrowing of its usage file, as a patch a person applies in a merge request', () => {
  /** A job directory holding the configuration source and its synthesis, and the usage report the audit log gives (computed as usage does). */
  async function narrowingJob(env: NodeJS.ProcessEnv, withSource = true, source = NARROWING_SOURCE) {
    const { outdir } = synthesizedRules(evaluateConfigSource(source));
    const dir = jobDirectory(withSource ? { 'stacks/platform.config.ts': source, 'audit.log': '' } : { 'audit.log': '' });
    const report = `${JSON.stringify(source === NARROWING_SOURCE ? await reportWithUse(outdir, NARROWING_USED) : await retireReport(outdir))}\n`;
    const r = recordingContext(dir, { SECRETSTORE_IAC_AUDIT_LOG: 'audit.log', ...env });
    const calls: string[][] = [];
    const narrow: PipelineNarrowRunner = async (args) => {
      calls.push([...args]);
      const out: string[] = [];
      const exitCode = await runCli(['narrow', ...args], { env: {}, cwd: dir, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => out.push(l) });
      return { exitCode, stdout: out.join('\n') };
    };
    const result = await runUsageJob({ ...r.ctx, outdir }, async () => ({ exitCode: 0, stdout: report }), narrow);
    const file = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : undefined);
    return { dir, outdir, result, calls, lines: r.lines.join('\n'), file };
  }

  it('narrowing.patch (git applies it: the edits --write makes) and narrowing.md (the evidence); the repository\'s source unchanged', async () => {
    const job = await narrowingJob({});
    expect(job.result).toEqual({ exitCode: 0, stacks: [] });
    expect(job.calls).toEqual([[job.outdir, '--usage', USAGE_FILE, '--config', 'stacks/platform.config.ts', '--markdown', NARROWING_FILE, '--patch', NARROWING_PATCH_FILE]]);
    expect(job.file('stacks/platform.config.ts')).toBe(NARROWING_SOURCE);
    expect(job.file(NARROWING_FILE)).toContain('| `accounts.mirror.readByCi: true -> false (accounts.mirror.consumers dropped, if any: SSI-R8)` | `ci-access/svc-mirror` |');
    expect(job.lines).toMatch(/the narrowing as a change: narrowing\.patch \(\d+ changed lines of stacks\/platform\.config\.ts; `git apply narrowing\.patch` in a merge request\) and narrowing\.md/);
    expect(spawnSync('git', ['init', '-q'], { cwd: job.dir }).status).toBe(0);
    const applied = spawnSync('git', ['apply', NARROWING_PATCH_FILE], { cwd: job.dir, encoding: 'utf8' });
    expect([applied.status, applied.stderr]).toEqual([0, '']);
    expect(job.file('stacks/platform.config.ts')).toContain('readByCi: false');
  });

  it(`${NARROWING_KEEP_VARIABLE} keeps grants regardless; one that names nothing fails the job after the usage file is kept, no narrowing`, async () => {
    const kept = await narrowingJob({ [NARROWING_KEEP_VARIABLE]: ' accounts.mirror ' });
    expect(kept.calls[0]).toEqual(expect.arrayContaining(['--keep', 'accounts.mirror']));
    expect(kept.result.exitCode).toBe(0);
    expect(kept.file(NARROWING_PATCH_FILE)).not.toContain('readByCi');
    const typo = await narrowingJob({ [NARROWING_KEEP_VARIABLE]: 'accounts.mirorr' });
    expect(typo.result.exitCode).toBe(2);
    expect(typo.file(USAGE_FILE)).toBeDefined();
    expect([typo.file(NARROWING_FILE), typo.file(NARROWING_PATCH_FILE)]).toEqual([undefined, undefined]);
    expect(typo.lines).toContain('narrow failed (exit 2): no narrowing; usage.json is kept');
  });

  it(`${NARROWING_RETIRE_IDLE_VARIABLE}=true retires the application whose role never logged in (narrow --retire-idle); false or unset lists it; another value fails the job, the usage file kept`, async () => {
    const retired = await narrowingJob({ [NARROWING_RETIRE_IDLE_VARIABLE]: 'true' }, true, NARROWING_RETIRE_SOURCE);
    expect(retired.result.exitCode).toBe(0);
    expect(retired.calls[0]).toContain('--retire-idle');
    expect(retired.file(NARROWING_PATCH_FILE)).toContain("-    'search-dev': { name: 'search', environment: 'dev' },\n");
    expect(retired.file(NARROWING_FILE)).toContain('applications.search-dev removed');
    for (const value of [undefined, 'false']) {
      const listed = await narrowingJob(value === undefined ? {} : { [NARROWING_RETIRE_IDLE_VARIABLE]: value }, true, NARROWING_RETIRE_SOURCE);
      expect([listed.result.exitCode, listed.calls[0].includes('--retire-idle')]).toEqual([0, false]);
      expect(listed.file(NARROWING_PATCH_FILE)).not.toContain('search-dev');
      expect(listed.file(NARROWING_FILE)).toContain('retire it by removing applications.search-dev from the PlatformConfig');
    }
    const typo = await narrowingJob({ [NARROWING_RETIRE_IDLE_VARIABLE]: 'yes' }, true, NARROWING_RETIRE_SOURCE);
    expect([typo.result.exitCode, typo.calls, typo.file(USAGE_FILE) !== undefined, typo.file(NARROWING_PATCH_FILE)]).toEqual([2, [], true, undefined]);
    expect(typo.lines).toContain(`${NARROWING_RETIRE_IDLE_VARIABLE} is "yes": give true (retire the roles that never logged in) or false; no narrowing, usage.json is kept`);
  });

  it('a repository without stacks/platform.config.ts: the usage file, no narrowing, said in one line', async () => {
    const job = await narrowingJob({}, false);
    expect(job.result).toEqual({ exitCode: 0, stacks: [] });
    expect(job.calls).toEqual([]);
    expect(job.lines).toContain('no stacks/platform.config.ts in the repository: no narrowing');
  });
});
