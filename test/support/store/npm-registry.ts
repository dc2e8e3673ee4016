/**
 * A real npm registry on 127.0.0.1 for the tests: Verdaccio, as tools/verdaccio/package-lock.json pins
 * it, installed once with `npm ci` into the toolchain cache ($CACHE/verdaccio/npm-<version>-<hash>,
 * never into the project's node_modules), started with a configuration of the test's own: no uplink
 * (npm takes every other package from its default registry, as a team's `.npmrc` with a scope line
 * does), packages readable and publishable only with a token, one user whose token the test gets.
 */
import { ChildProcess, execFileSync, spawn } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from '../paths';
import { freePort } from './store-server';
import { cacheDir } from './toolchain-env';

const TOOLS = path.join(REPO_ROOT, 'tools', 'verdaccio');

/** A running registry: its URL (with the trailing slash npm configuration uses) and a publishing user's token. */
export interface RunningNpmRegistry {
  readonly url: string;
  /** The token of its only user: reads and publishes (`//HOST/:_authToken=` in `.npmrc`). */
  readonly token: string;
  stop(): Promise<void>;
}

/** The pinned Verdaccio's directory, installed on first use. */
function verdaccioPackages(): string {
  const manifest = fs.readFileSync(path.join(TOOLS, 'package.json'), 'utf8');
  const lock = fs.readFileSync(path.join(TOOLS, 'package-lock.json'), 'utf8');
  const version = (JSON.parse(manifest) as { dependencies: Record<string, string> }).dependencies.verdaccio;
  const dir = path.join(cacheDir(), 'verdaccio', `npm-${version}-${createHash('sha256').update(manifest).update(lock).digest('hex').slice(0, 12)}`);
  if (!fs.existsSync(path.join(dir, '.installed'))) {
    // Installed beside and renamed into place: the two store lanes (scripts/store-lanes.js) may both
    // install it at once, and neither may see the other's half-installed directory.
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    const building = fs.mkdtempSync(`${dir}.installing-`);
    try {
      fs.writeFileSync(path.join(building, 'package.json'), manifest);
      fs.writeFileSync(path.join(building, 'package-lock.json'), lock);
      // --ignore-scripts: Verdaccio needs no install script to serve packages.
      execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: building, stdio: ['ignore', 'ignore', 'pipe'] });
      fs.writeFileSync(path.join(building, '.installed'), `${new Date().toISOString()}\n`);
      const installed = () => fs.existsSync(path.join(dir, '.installed'));
      try {
        fs.renameSync(building, dir);
      } catch {
        // The other lane's rename came first (its directory is the same install), or an install of
        // an older version of this helper was interrupted there: removed, and renamed once more.
        if (!installed()) {
          fs.rmSync(dir, { recursive: true, force: true });
          fs.renameSync(building, dir);
        }
      }
    } finally {
      fs.rmSync(building, { recursive: true, force: true });
    }
  }
  return dir;
}

/**
 * Starts Verdaccio with its storage in `workDir` and creates one user (the registry's own user API,
 * what `npm adduser` calls).
 * @throws Error with the registry's output when it does not answer
 */
export async function startNpmRegistry(workDir: string): Promise<RunningNpmRegistry> {
  const packages = verdaccioPackages();
  fs.mkdirSync(workDir, { recursive: true });
  const config = path.join(workDir, 'config.yaml');
  fs.writeFileSync(
    config,
    [
      `storage: ${JSON.stringify(path.join(workDir, 'storage'))}`,
      'auth:',
      '  htpasswd:',
      `    file: ${JSON.stringify(path.join(workDir, 'htpasswd'))}`,
      '    max_users: 1',
      'uplinks: {}',
      'packages:',
      "  '**':",
      '    access: $authenticated',
      '    publish: $authenticated',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  let output = '';
  const child: ChildProcess = spawn(process.execPath, [path.join(packages, 'node_modules', 'verdaccio', 'bin', 'verdaccio'), '--config', config, '--listen', `127.0.0.1:${port}`], {
    cwd: workDir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  try {
    for (let attempt = 0; ; attempt++) {
      const ping = await fetch(`${url}-/ping`).then((r) => r.ok, () => false);
      if (ping) break;
      if (child.exitCode !== null || attempt >= 600) throw new Error(`verdaccio did not answer on ${url}:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const user = await fetch(`${url}-/user/org.couchdb.user:ci`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ci', password: createHash('sha256').update(`${Date.now()}${Math.random()}`).digest('hex') }),
    });
    const body = (await user.json()) as { token?: string };
    if (!user.ok || !body.token) throw new Error(`verdaccio refused the user (HTTP ${user.status}):\n${output}`);
    return { url, token: body.token, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
