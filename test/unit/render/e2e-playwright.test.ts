/**
 * The generated end-to-end files (spec §2.6, §2.7, §5.7, §8): the job's conventions, the Playwright
 * files compiled with tsc against the pinned @playwright/test, and the global setup run as a process
 * against a local HTTP server (no browser needed).
 */
import { execFile, execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { promisify } from 'util';
import * as yaml from 'js-yaml';
import { E2E_DEFAULT_IMAGE, renderE2eGitignore, renderE2eJobYaml, renderGlobalSetup, renderPlaywrightConfig, renderReportingReporter } from '../../../lib';
import { REPO_ROOT } from '../../support/paths';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';

describe('the e2e-test job (§8)', () => {
  const job = (yaml.load(renderE2eJobYaml({ ciBaseUrl: 'http://10.0.0.5:3000' })) as Record<string, any>)['e2e-test'];

  it('runs in verify on main only, may fail, keeps its reports two weeks', () => {
    expect(job.extends).toBe('.secretstore-e2e-test');
    expect(job.stage).toBe('verify');
    expect(job.rules).toEqual([{ if: '$CI_COMMIT_BRANCH == "main"' }]);
    expect(job.allow_failure).toBe(true);
    expect(job.artifacts.expire_in).toBe('2 weeks');
    expect(job.artifacts.paths).toEqual(['playwright-report/', 'test-results/', 'junit.xml']);
    expect(job.artifacts.reports).toEqual({ junit: 'junit.xml' });
    expect(job.variables.E2E_BASE_URL).toBe('http://10.0.0.5:3000');
    // The saved state holds the user's token: it is never kept as an artifact.
    expect(JSON.stringify(job.artifacts)).not.toContain('.auth');
  });

  it('runs in Playwright\'s image of the pinned version by default, or the image given', () => {
    expect(E2E_DEFAULT_IMAGE).toBe('mcr.microsoft.com/playwright:v1.58.2-noble');
    expect(job.image).toBe(E2E_DEFAULT_IMAGE);
    expect((yaml.load(renderE2eJobYaml({ image: 'registry.acme.example/node-chromium:22' })) as any)['e2e-test'].image).toBe('registry.acme.example/node-chromium:22');
  });

  it('installs before it tests: npm ci, then Playwright\'s Chromium unless PLAYWRIGHT_CHROMIUM_EXECUTABLE names one', () => {
    expect(job.script).toEqual(['npm ci', 'if [ -z "${PLAYWRIGHT_CHROMIUM_EXECUTABLE:-}" ]; then npx playwright install chromium; fi', 'npx playwright test']);
    // The extended job's before_script is the store login: a before_script here would replace it.
    expect(job).not.toHaveProperty('before_script');
  });
});

describe('the generated .gitignore', () => {
  it('ignores .auth/ (the test user\'s token) and the run\'s reports', () => {
    expect(renderE2eGitignore().split('\n').filter((l) => l && !l.startsWith('#'))).toEqual(['.auth/', 'test-results/', 'playwright-report/', 'junit.xml']);
  });
});

describe('the e2e-test job\'s ordering (§8: after verify-dev)', () => {
  it('no needs by default: it waits for every job of the earlier stages (verify listed after verify-dev)', () => {
    const job = (yaml.load(renderE2eJobYaml()) as Record<string, any>)['e2e-test'];
    expect(job.stage).toBe('verify');
    expect(job).not.toHaveProperty('needs');
  });

  it('needs: the named jobs, required (not optional: an absent optional need starts the job at once)', () => {
    const job = (yaml.load(renderE2eJobYaml({ needs: ['verify-dev', 'deploy:dev'] })) as Record<string, any>)['e2e-test'];
    expect(job.needs).toEqual(['verify-dev', 'deploy:dev']);
  });

  it('gitlab-ci-local (GitLab CI schema) accepts the needs on verify-dev, and refuses a needed job that does not exist', () => {
    const validate = (needs: string[]) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'glci-e2e-'));
      const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...a], { cwd: dir, stdio: 'pipe' });
      git('init', '-q', '-b', 'main');
      // The project's stages and verify-dev job; the login base job stands in for the CI template's.
      const project = 'stages: [build, deploy-dev, verify-dev, verify]\n.secretstore-e2e-test:\n  before_script: [echo login]\nverify-dev:\n  stage: verify-dev\n  script: [echo ok]\n';
      fs.writeFileSync(path.join(dir, '.gitlab-ci.yml'), project + renderE2eJobYaml({ needs }));
      git('add', '.');
      git('commit', '-q', '-m', 'pipeline');
      const r = spawnSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'gitlab-ci-local'), ['--list-all', '--json-schema-validation'], { cwd: dir, encoding: 'utf8' });
      fs.rmSync(dir, { recursive: true, force: true });
      return r.stdout + r.stderr;
    };
    const ok = validate(['verify-dev']);
    expect(ok).toContain('json schema validated');
    expect(ok).toMatch(/^e2e-test\s.*\[verify-dev\]\s*$/m);
    expect(validate(['verify-prod'])).toContain('needs: [verify-prod] for e2e-test could not be found');
  });

  it('an empty or multi-line job name in needs is refused at synthesis, naming construct and field', () => {
    expect(() => synthesizePlatform({ ...platformConfig, e2eTests: { needs: ['verify-dev', ' ', 'a\nb'] } })).toThrow(
      /\[ci-access\/e2e-template\] needs = " ": must be a job name[^]*\[ci-access\/e2e-template\] needs = "a\\nb": must be a job name/,
    );
  });
});

describe('the e2e-test job\'s branch', () => {
  it('a branch a rules expression string cannot hold is refused at synthesis, naming construct and field', () => {
    expect(() => synthesizePlatform({ ...platformConfig, e2eTests: { branch: 'ma"in' } })).toThrow(
      /\[ci-access\/e2e-template\] branch = "ma\\"in": must not hold a double quote or a control character/,
    );
  });
});

describe('the Playwright files', () => {
  let dir: string;
  let server: http.Server;
  let baseUrl: string;
  const requests: Array<{ url?: string; method?: string; body: string }> = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-files-'));
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    fs.writeFileSync(path.join(dir, 'global-setup.ts'), renderGlobalSetup({ usernameField: 'email', storageKey: 'orchestrator-auth' }));
    fs.writeFileSync(path.join(dir, 'playwright.config.ts'), renderPlaywrightConfig({ browserExecutablePath: '/usr/bin/chromium' }));
    fs.writeFileSync(path.join(dir, 'reporting-reporter.ts'), renderReportingReporter());
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        requests.push({ url: req.url, method: req.method, body });
        const sent = JSON.parse(body || '{}');
        if (req.url === '/api/v1/auth/login' && sent.email === 'e2e@acme.example' && sent.password === 'pw-secret') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ access_token: 'tok-123', user: { id: 7, role: 'admin' } }));
        } else {
          res.writeHead(401).end('{}');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('compile with tsc against @playwright/test 1.58.2', () => {
    expect(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', '@playwright', 'test', 'package.json'), 'utf8')).version).toBe('1.58.2');
    execFileSync(
      process.execPath,
      [
        path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        ...['--outDir', path.join(dir, 'js'), '--module', 'commonjs', '--target', 'ES2022', '--strict', '--esModuleInterop'],
        ...['--skipLibCheck', '--types', 'node', '--noUnusedLocals', 'global-setup.ts', 'playwright.config.ts', 'reporting-reporter.ts'],
      ],
      { cwd: dir, stdio: 'pipe' },
    );
    expect(fs.existsSync(path.join(dir, 'js', 'global-setup.js'))).toBe(true);
  });

  it('the config has the two projects of §2.6 with their match patterns', () => {
    const config = require(path.join(dir, 'js', 'playwright.config.js'));
    const pattern: RegExp = config.UNAUTHENTICATED_FILES;
    for (const f of ['specs/auth/login.spec.ts', 'specs/auth/register.spec.ts', '/e/specs/public-pages.spec.ts', 'specs/user_login.test.ts']) expect(pattern.test(f)).toBe(true);
    for (const f of ['specs/admin/users.spec.ts', 'specs/workflows/publication.spec.ts', 'login/helpers.ts']) expect(pattern.test(f)).toBe(false);
    const projects = config.default.projects;
    expect(projects.map((p: any) => p.name)).toEqual(['authenticated', 'unauthenticated']);
    expect(projects[0].use.storageState).toBe('.auth/admin.json');
    expect(projects[0].testIgnore).toBe(pattern);
    expect(projects[1].testMatch).toBe(pattern);
    expect(projects[1].use.storageState).toEqual({ cookies: [], origins: [] });
    expect(config.default.globalSetup).toBe('./global-setup.ts');
  });

  it('the browser binary: PLAYWRIGHT_CHROMIUM_EXECUTABLE, else the configured default, as launchOptions.executablePath', () => {
    const load = (env: NodeJS.ProcessEnv) =>
      JSON.parse(
        execFileSync(process.execPath, ['-e', "process.stdout.write(JSON.stringify(require('./js/playwright.config.js').default.use.launchOptions))"], {
          cwd: dir,
          env: { PATH: process.env.PATH, ...env },
          encoding: 'utf8',
        }).replace(/^playwright config:.*\n/m, ''),
      );
    expect(load({})).toEqual({ executablePath: '/usr/bin/chromium' });
    expect(load({ PLAYWRIGHT_CHROMIUM_EXECUTABLE: '/opt/chrome/chrome' })).toEqual({ executablePath: '/opt/chrome/chrome' });
    expect(renderPlaywrightConfig()).toContain('process.env.PLAYWRIGHT_CHROMIUM_EXECUTABLE || undefined');
  });

  it('videos on failure only when Playwright\'s ffmpeg is installed; otherwise off, said once', () => {
    const run = (browsers: string) =>
      execFileSync(process.execPath, ['-e', "console.log('video=' + require('./js/playwright.config.js').default.use.video)"], {
        cwd: dir,
        env: { PATH: process.env.PATH, PLAYWRIGHT_BROWSERS_PATH: browsers },
        encoding: 'utf8',
      });
    const none = fs.mkdtempSync(path.join(os.tmpdir(), 'pw-none-'));
    const off = run(none);
    expect(off).toContain('video=off');
    expect(off.match(/videos are off/g)).toHaveLength(1);
    // Where the registry of @playwright/test 1.58.2 looks for its ffmpeg (read at load): a file there turns videos on.
    const registry = path.join(REPO_ROOT, 'node_modules', 'playwright-core', 'lib', 'server', 'registry', 'index');
    const ffmpeg = execFileSync(process.execPath, ['-e', `process.stdout.write(require(${JSON.stringify(registry)}).registry.findExecutable('ffmpeg').executablePath())`], {
      env: { PATH: process.env.PATH, PLAYWRIGHT_BROWSERS_PATH: none },
      encoding: 'utf8',
    });
    expect(ffmpeg.startsWith(none + path.sep)).toBe(true);
    fs.mkdirSync(path.dirname(ffmpeg), { recursive: true });
    fs.writeFileSync(ffmpeg, '', { mode: 0o755 });
    const on = run(none);
    expect(on).toContain('video=retain-on-failure');
    expect(on).not.toContain('videos are off');
    fs.rmSync(none, { recursive: true, force: true });
  });

  const runSetup = (env: NodeJS.ProcessEnv) =>
    promisify(execFile)(process.execPath, ['-e', "require('./js/global-setup.js').default().catch((e) => { console.error(e.message); process.exit(1); })"], {
      cwd: dir,
      env: { PATH: process.env.PATH, ...env },
    });

  it('the global setup logs in with the configured field names and writes .auth/admin.json', async () => {
    const r = await runSetup({ E2E_BASE_URL: baseUrl, E2E_TEST_USER_USERNAME: 'e2e@acme.example', E2E_TEST_USER_PASSWORD: 'pw-secret' });
    expect(requests.at(-1)).toEqual({ url: '/api/v1/auth/login', method: 'POST', body: JSON.stringify({ email: 'e2e@acme.example', password: 'pw-secret' }) });
    const file = path.join(dir, '.auth', 'admin.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({
      cookies: [],
      origins: [{ origin: baseUrl, localStorage: [{ name: 'orchestrator-auth', value: JSON.stringify({ accessToken: 'tok-123', user: { id: 7, role: 'admin' } }) }] }],
    });
    expect(r.stdout + r.stderr).not.toMatch(/pw-secret|tok-123/);
  });

  it('a state file left with mode 0644 is narrowed to 0600 when rewritten', async () => {
    const file = path.join(dir, '.auth', 'admin.json');
    fs.chmodSync(file, 0o644);
    await runSetup({ E2E_BASE_URL: baseUrl, E2E_TEST_USER_USERNAME: 'e2e@acme.example', E2E_TEST_USER_PASSWORD: 'pw-secret' });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('a refused login stops the setup with the status and no credential in the message', async () => {
    const r = runSetup({ E2E_BASE_URL: baseUrl, E2E_TEST_USER_USERNAME: 'e2e@acme.example', E2E_TEST_USER_PASSWORD: 'wrong-pw' });
    await expect(r).rejects.toMatchObject({ stderr: expect.stringContaining('answered HTTP 401') });
    await r.catch((e) => expect(String(e.stderr)).not.toContain('wrong-pw'));
  });

  it('without the exported variables the setup names the job template to extend', async () => {
    await expect(runSetup({ E2E_BASE_URL: baseUrl })).rejects.toMatchObject({ stderr: expect.stringContaining('.secretstore-e2e-test') });
  });
});
