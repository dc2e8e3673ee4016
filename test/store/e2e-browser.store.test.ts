/**
 * The generated Playwright files, run as generated in a real browser (spec §2.5–2.7, §4.2, §5.7, §6):
 * Debian's Chromium (`apt-get install chromium`; `bash .ci/run` installs it) drives a small reference UI
 * served on 127.0.0.1 with the spec's login endpoint. The UI shows "signed in" only when the token in
 * its persisted state is accepted by its backend. The test-reporting API key lives in a real OpenBao
 * dev server at secret/data/testreport/svc-orchestrator, read by the generated reporter with a job token
 * whose policy allows that one path; the reporting endpoint is a server of the test's own.
 * Nothing is installed at test time: the browser is the system's, Playwright is the devDependency.
 */
import { execFile } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { App } from 'cdktf';
import { E2eTestTemplate } from '../../lib';
import { REPO_ROOT } from '../support/paths';
import { requiredCommand } from '../support/required-command';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';

const CHROMIUM = requiredCommand('chromium', 'the generated Playwright files in a real browser (e2e-browser store test)');

const USER = { username: 'e2e-admin@acme.example', password: `pw-${crypto.randomBytes(8).toString('hex')}` };
const ACCESS_TOKEN = `at-${crypto.randomBytes(12).toString('hex')}`;
const API_KEY = `key-${crypto.randomBytes(12).toString('hex')}`;

/** The reference UI: its page asks the backend who the persisted token belongs to. */
const PAGE = `<!doctype html><html><body><p data-testid="status">loading</p><script>
(async () => {
  const status = document.querySelector('[data-testid=status]');
  let entry = null;
  try { entry = JSON.parse(localStorage.getItem('auth') || 'null'); } catch {}
  if (!entry || !entry.accessToken) { status.textContent = 'signed out'; return; }
  const r = await fetch('/api/v1/me', { headers: { authorization: 'Bearer ' + entry.accessToken } });
  status.textContent = r.ok ? 'signed in as ' + (await r.json()).name : 'signed out';
})();
</script></body></html>`;

function serve(handler: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => handler(req, body, res));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

interface Report {
  authorization?: string;
  event: Record<string, any>;
}

if (CHROMIUM) {
  describe('the generated Playwright files in Debian\'s Chromium', () => {
    let store: RunningStore;
    let jobToken: string;
    let app: { server: http.Server; url: string };
    let reporting: { server: http.Server; url: string };
    const reports: Report[] = [];
    let dir: string;
    let files: Record<string, string>;

    const runPlaywright = (env: NodeJS.ProcessEnv) =>
      new Promise<{ code: number; output: string }>((resolve) => {
        execFile(
          process.execPath,
          [path.join(REPO_ROOT, 'node_modules', '@playwright', 'test', 'cli.js'), 'test'],
          {
            cwd: dir,
            // Only what a job has: no ambient Playwright download (its ffmpeg or browsers) is seen.
            env: { PATH: process.env.PATH, HOME: dir, PLAYWRIGHT_BROWSERS_PATH: path.join(dir, 'no-browsers'), CI: '1', ...env },
            timeout: 240_000,
          },
          (error, stdout, stderr) => resolve({ code: error ? Number((error as any).code ?? 1) : 0, output: stdout + stderr }),
        );
      });

    beforeAll(async () => {
      store = await startStore();
      expect((await storeRequest(store, 'POST', 'secret/data/testreport/svc-orchestrator', { data: { api_key: API_KEY } })).status).toBe(200);
      const policy = 'path "secret/data/testreport/svc-orchestrator" { capabilities = ["read"] }';
      expect((await storeRequest(store, 'PUT', 'sys/policies/acl/e2e-report', { policy })).status).toBe(204);
      // The job's store token: what the CI login leaves behind, allowed to read this one path.
      const created = await storeRequest(store, 'POST', 'auth/token/create', { policies: ['e2e-report'], no_default_policy: true, ttl: '10m' });
      jobToken = created.body.auth.client_token;

      app = await serve((req, body, res) => {
        if (req.method === 'POST' && req.url === '/api/v1/auth/login') {
          const sent = JSON.parse(body || '{}');
          const ok = sent.username === USER.username && sent.password === USER.password;
          res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
          res.end(JSON.stringify(ok ? { access_token: ACCESS_TOKEN, user: { name: 'E2E Admin' } } : { error: 'invalid credentials' }));
        } else if (req.url === '/api/v1/me') {
          const ok = req.headers.authorization === `Bearer ${ACCESS_TOKEN}`;
          res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
          res.end(JSON.stringify(ok ? { name: 'E2E Admin' } : {}));
        } else {
          res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
        }
      });
      reporting = await serve((req, body, res) => {
        reports.push({ authorization: req.headers.authorization, event: JSON.parse(body) });
        res.writeHead(202).end();
      });

      // The files as the construct generates them, with the system browser as the configured default.
      const template = new E2eTestTemplate(new App(), 'e2e', { browserExecutablePath: CHROMIUM });
      files = Object.fromEntries(template.artifacts().map((a) => [a.path, String(a.content)]));
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-browser-'));
      fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
      for (const [file, content] of Object.entries(files)) {
        if (file.startsWith('e2e/')) fs.writeFileSync(path.join(dir, file.slice('e2e/'.length)), content);
      }
      fs.mkdirSync(path.join(dir, 'specs', 'admin'), { recursive: true });
      fs.mkdirSync(path.join(dir, 'specs', 'auth'), { recursive: true });
      const spec = (expected: string) =>
        `import { test, expect } from '@playwright/test';\n` +
        `test('the start page', async ({ page }) => {\n  await page.goto('/');\n  await expect(page.getByTestId('status')).toHaveText(${JSON.stringify(expected)});\n});\n`;
      fs.writeFileSync(path.join(dir, 'specs', 'admin', 'dashboard.spec.ts'), spec('signed in as E2E Admin'));
      fs.writeFileSync(path.join(dir, 'specs', 'auth', 'login.spec.ts'), spec('signed out'));
      // A state file left world-readable by an earlier run: the setup narrows it when rewriting it.
      fs.mkdirSync(path.join(dir, '.auth'));
      fs.writeFileSync(path.join(dir, '.auth', 'admin.json'), '{}', { mode: 0o644 });
      fs.chmodSync(path.join(dir, '.auth', 'admin.json'), 0o644);
    });

    afterAll(async () => {
      for (const s of [app?.server, reporting?.server]) if (s) await new Promise((r) => s.close(r));
      await store?.stop();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    const baseEnv = () => ({ E2E_BASE_URL: app.url, E2E_TEST_USER_USERNAME: USER.username, E2E_TEST_USER_PASSWORD: USER.password });
    let first: { code: number; output: string };

    describe('with REPORTING_ENDPOINT set and the job\'s store token', () => {
      beforeAll(async () => {
        first = await runPlaywright({ ...baseEnv(), REPORTING_ENDPOINT: reporting.url, SECRETSTORE_ADDR: store.addr, VAULT_TOKEN: jobToken });
      });

      it('both projects pass: the authenticated spec starts signed in, the login spec starts clean', () => {
        expect({ code: first.code, output: first.output }).toMatchObject({ code: 0 });
        expect(first.output).toMatch(/\[authenticated\] › specs[\\/]admin[\\/]dashboard\.spec\.ts/);
        expect(first.output).toMatch(/\[unauthenticated\] › specs[\\/]auth[\\/]login\.spec\.ts/);
        expect(first.output).toMatch(/2 passed/);
      });

      it('the saved state file is mode 0600 after the rewrite, though it was 0644 before', () => {
        expect(fs.statSync(path.join(dir, '.auth', 'admin.json')).mode & 0o777).toBe(0o600);
      });

      it('without Playwright\'s ffmpeg, videos are off with one log line, and the run still passes', () => {
        expect(first.output.match(/no ffmpeg of Playwright \(npx playwright install ffmpeg\): videos are off/g)).toHaveLength(1);
      });

      it('the reporting endpoint receives the run in real time, with the API key read from the store', () => {
        expect(reports.map((r) => r.event.event)).toEqual(['begin', 'test', 'test', 'end']);
        expect(reports.every((r) => r.authorization === `Bearer ${API_KEY}`)).toBe(true);
        const tests = reports.filter((r) => r.event.event === 'test').map((r) => [r.event.project, r.event.status]);
        expect(tests.sort()).toEqual([
          ['authenticated', 'passed'],
          ['unauthenticated', 'passed'],
        ]);
        expect(reports.at(-1)!.event.status).toBe('passed');
        expect(new Set(reports.map((r) => r.event.runId)).size).toBe(1);
      });

      it('prints no credential, no access token and no API key', () => {
        for (const secret of [USER.password, ACCESS_TOKEN, API_KEY, jobToken]) expect(first.output).not.toContain(secret);
      });
    });

    describe('with REPORTING_ENDPOINT unset', () => {
      it('reporting is silently off: the run passes, nothing is posted, nothing is said about it', async () => {
        const before = reports.length;
        const run = await runPlaywright(baseEnv());
        expect(run.output).toMatch(/2 passed/);
        expect(run.code).toBe(0);
        expect(reports.length).toBe(before);
        expect(run.output).not.toMatch(/reporting/i);
      });
    });

    describe('the generated .gitignore', () => {
      it('keeps .auth/ (the test user\'s token) out of git add -A', async () => {
        const git = (...args: string[]) =>
          new Promise<string>((resolve, reject) =>
            execFile('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: dir }, (e, out) => (e ? reject(e) : resolve(out))),
          );
        await git('init', '-q');
        await git('add', '-A');
        const staged = (await git('diff', '--cached', '--name-only')).split('\n');
        expect(staged).toEqual(expect.arrayContaining(['.gitignore', 'global-setup.ts', 'playwright.config.ts', 'reporting-reporter.ts']));
        expect(staged.filter((f) => f.startsWith('.auth') || f.startsWith('test-results'))).toEqual([]);
        expect(fs.existsSync(path.join(dir, '.auth', 'admin.json'))).toBe(true);
      });
    });
  });
}
