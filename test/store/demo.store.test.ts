/**
 * `npm run demo` (demo/demo.ts): from a clone with `npm ci` done, it builds, starts a dev store, applies
 * both stacks, logs a signed job token in, provisions an application and renders its agent's `.env`,
 * printing each step with what it proves, then stops everything and removes its temp dir.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { REPO_ROOT } from '../support/paths';

describe('npm run demo', () => {
  let code: number | null;
  let output = '';

  beforeAll(async () => {
    code = await new Promise<number | null>((resolve) => {
      const child = spawn('npm', ['run', 'demo'], { cwd: REPO_ROOT, env: process.env });
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.on('close', resolve);
    });
  });

  it('exits 0 and says it is done', () => {
    expect({ code, tail: output.slice(-2000) }).toMatchObject({ code: 0 });
    expect(output).toMatch(/\ndemo: done\n/);
  });

  it('prints every step with what it proves, in order', () => {
    const steps = [...output.matchAll(/^\[demo (\d+)\] (.*)\n {9}proves: .+$/gm)].map((m) => [Number(m[1]), m[2]]);
    expect(steps.map(([n]) => n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const titles = steps.map(([, t]) => t).join('\n');
    for (const expected of [/dev server/, /key pair/, /synthesize/, /apply ci-access/, /apply app-roles/, /log in as registry-ci/, /provision orchestrator-dev/, /until \.env is rendered/, /stop/]) {
      expect(titles).toMatch(expected);
    }
    expect(output).toMatch(/logged in: policies default, registry-ci/);
    expect(output).toMatch(/\.env rendered with PG_HOST, PG_PASSWORD, PG_USER \(values not shown\)/);
  });

  it('leaves neither its temp dir nor its store behind', async () => {
    const dir = /(\/\S*secretstore-demo-[^/\s]+)\//.exec(output)?.[1];
    expect(dir).toBeDefined();
    expect(fs.existsSync(dir!)).toBe(false);
    const addr = /store at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    await new Promise((r) => setTimeout(r, 1000));
    await expect(fetch(`${addr}/v1/sys/health`)).rejects.toThrow();
  });

  it('prints no token: no hex string of a root token or Secret ID length, no JWT', () => {
    expect(output).not.toMatch(/\b[0-9a-f]{48}\b/); // the root token is 24 random bytes in hex
    expect(output).not.toMatch(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./); // a job token
    expect(output).not.toMatch(/\b(hvs|s)\.[A-Za-z0-9]{20,}/); // a store token
    expect(output).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/); // a Role ID or Secret ID
  });
});
