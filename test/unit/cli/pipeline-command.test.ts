/**
 * `secretstore-iac pipeline`: the job commands as the CLI runs them (usage, exit codes, --format
 * json, the artifacts a job needs). The engine is reached through the `tf` command's function: here
 * it stops before running anything (no synthesized stack), which shows the wiring; the real engine
 * runs in the pipeline store tests.
 */
import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as path from 'path';
import { pipelineExitCode } from '../../../lib/cli/pipeline-command';
import { runCli } from '../../../lib/cli/run-cli';
import { jobDirectory } from '../pipeline/pipeline-fixture';

async function run(dir: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['pipeline', ...args], { env: { PATH: process.env.PATH, ...env }, cwd: dir, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('secretstore-iac pipeline', () => {
  it('an unchanged stack: exit 0, one line saying what was decided and why, no engine run', async () => {
    const r = await run(jobDirectory({ 'changed-stacks.txt': 'ci-access\n' }), ['plan', '--stack', 'people', '--merge-request']);
    expect(r).toEqual({ code: 0, out: 'secretstore-iac pipeline plan: stack people is unchanged (same content digest as the base, and no stack it depends on changed): nothing to plan', err: '' });
  });

  it('--format json: the decisions as JSON on standard output, the log on standard error', async () => {
    const r = await run(jobDirectory({ 'changed-stacks.txt': 'app-roles-4\n' }), ['apply', '--group', 'app-roles-shards', '--job', '2', '--format', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      job: 'apply',
      exitCode: 0,
      stacks: [],
      decisions: [{ message: "none of the 1 selected stacks of app-roles-shards is job 2's (of 4; 6 stacks in the group, the others unchanged; the n-th selected stack of the group is job ((n - 1) mod 4) + 1's): nothing to apply" }],
    });
    expect(r.err).toContain('secretstore-iac pipeline apply: none of the 1 selected stacks');
  });

  it('a missing selection fails the job (exit 3) rather than skip its stacks; the retired job needs its own list', async () => {
    const r = await run(jobDirectory({}), ['plan', '--stack', 'ci-access']);
    expect(r.code).toBe(3);
    expect(r.err).toContain("changed-stacks.txt, the synth job's selection of the stacks, is missing");
    const retired = await run(jobDirectory({ 'changed-stacks.txt': '' }), ['apply', '--retired']);
    expect(retired.code).toBe(3);
    expect(retired.err).toContain("retired-stacks.txt, the synth job's list of retired stacks, is missing");
    const removals = await run(jobDirectory({ 'changed-stacks.txt': '' }), ['removals']);
    expect(removals.code).toBe(3);
  });

  it('a missing pipeline description names the file and the fix (exit 3)', async () => {
    const dir = jobDirectory({ 'changed-stacks.txt': 'ci-access\n' });
    fs.rmSync(path.join(dir, 'cdktf.out'), { recursive: true });
    const r = await run(dir, ['plan', '--stack', 'ci-access']);
    expect(r.code).toBe(3);
    expect(r.err).toContain('ci/secretstore-iac.pipeline.json is missing: it is written by synthesis');
  });

  it('a selected stack reaches the `tf` command (here: no synthesized stack, exit 3 from tf)', async () => {
    const r = await run(jobDirectory({ 'changed-stacks.txt': 'people\n' }), ['plan', '--stack', 'people', '--merge-request'], { SECRETSTORE_ADDR: 'http://127.0.0.1:9' });
    expect(r.code).toBe(3);
    expect(r.out).toContain('secretstore-iac pipeline plan: stack people is selected');
    expect(r.err).toMatch(/^secretstore-iac tf: no synthesized stack at .*cdktf\.out\/stacks\/people: run `npm run synth` first, or pass --outdir/m);
    expect(r.out).toContain('secretstore-iac pipeline plan: init of people ended with exit 3: the job fails');
  });

  it('review --default-branch without plans writes the empty record (the artifact the apply jobs read)', async () => {
    const dir = jobDirectory({});
    const r = await run(dir, ['review', '--default-branch']);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'reviewed-plans.json'), 'utf8')).toBe('{"plans":[]}\n');
  });

  it('exit codes: a failed run\'s own code; 1 for risk flags not acknowledged or a drift; else 0', () => {
    expect(pipelineExitCode({ exitCode: 0, stacks: [] })).toBe(0);
    expect(pipelineExitCode({ exitCode: 0, attention: 'risk-flags', stacks: [] })).toBe(1);
    expect(pipelineExitCode({ exitCode: 0, attention: 'drift', stacks: [] })).toBe(1);
    expect(pipelineExitCode({ exitCode: 4, stacks: [] })).toBe(4);
  });

  it.each([
    [[], 'expects a job: synth, plan, apply, removals, review, drift'],
    [['deploy'], 'expects a job: synth, plan, apply, removals, review, drift, confirm, usage, not "deploy"'],
    [['plan'], 'give one of --stack STACK, --group GROUP --job N, --retired'],
    [['plan', '--stack', 'a', '--retired'], 'give one of --stack STACK, --group GROUP --job N, --retired'],
    [['plan', '--group', 'g'], '--group GROUP goes with --job N'],
    [['apply', '--stack', 'a', '--merge-request'], 'pipeline apply does not take --merge-request'],
    [['review'], 'give one of --merge-request, --default-branch'],
    [['drift'], 'drift expects --stack STACK'],
    [['plan', '--stack', 'a', '--format', 'md'], '--format must be one of text, json'],
  ])('usage error %j: exit 2', async (args, message) => {
    const r = await run(jobDirectory({}), args as string[]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });

  it('a usage error is found before the job logs in: no request reaches the store, no token is made', async () => {
    const requests: string[] = [];
    const server = http.createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const login = { SECRETSTORE_ADDR: address, SECRETSTORE_IAC_LOGIN_ROLE: 'secretstore-iac-plan', SECRETSTORE_IAC_LOGIN_MOUNT: 'jwt', SECRETSTORE_IAC_LOGIN_AUDIENCE: 'https://gitlab.acme.example', SECRETSTORE_ID_TOKEN: 'a.b.c' };
      for (const args of [['plan'], ['review'], ['drift'], ['apply', '--stack', 'a', '--merge-request']]) {
        const r = await run(jobDirectory({}), args, login);
        expect({ args, code: r.code }).toEqual({ args, code: 2 });
      }
      expect(requests).toEqual([]);
      // The same environment with valid options does reach the store's login (so the check above can fail).
      await run(jobDirectory({}), ['review', '--default-branch'], login);
      expect(requests).toEqual(['POST /v1/auth/jwt/login']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
