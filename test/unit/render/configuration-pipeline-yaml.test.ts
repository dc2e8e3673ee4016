/**
 * The access-diff job's review-and-posting step, run for real: the job's rendered script under bash with the
 * runner's `set -eo pipefail`, curl against a local HTTP server acting as GitLab's notes API. Only the
 * diff itself is a prepared report (an `npx` on PATH that prints it): the store is not needed here.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { renderConfigurationPipelineYaml } from '../../../lib/render/configuration-pipeline-yaml';

const TOKEN = 'glpat-unit-NOTE-token-0f3a9c';
const TOKEN_VARIABLE = 'SECRETSTORE_IAC_NOTE_TOKEN';
// Markdown with every character form encoding cares about, and more than one line.
const REPORT = '## Access diff\n\n| who | path | change |\n|---|---|---|\n| `ci-x` | secret/data/a+b & c=d%20 | **added** read ✓ |\n\n50% done; "quotes" \'too\'\n';

const pipeline = yaml.load(
  renderConfigurationPipelineYaml({
    stacks: ['ci-access'],
    authPath: 'jwt',
    audience: 'https://gitlab.acme.example',
    applyRoleName: 'secretstore-iac-pipeline',
    planRoleName: 'secretstore-iac-plan',
    acknowledgeLabel: 'access-risk-acknowledged',
    noteTokenVariable: TOKEN_VARIABLE,
    installCommand: 'true',
    committedCopy: '.gitlab/secretstore-iac.gitlab-ci.yml',
  }),
) as Record<string, any>;
const job = pipeline['secretstore-iac-access-diff'];
// The item that runs the diff, posts it and applies the risk-flag gate (the others install and fetch).
const postingItem: string = job.script.find((item: string) => item.includes('access-diff --plans secretstore-iac-plans'));

interface Received {
  method?: string;
  url?: string;
  privateToken?: string | string[];
  contentType?: string;
  body: URLSearchParams;
}

/** Runs the posting item against a notes API answering `status`; returns what the API saw and the job's output. */
async function runJob(status: number, env: Record<string, string>, stacksNote?: string, planned = true): Promise<{ code: number | null; output: string; received: Received[]; args: string }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, privateToken: req.headers['private-token'], contentType: req.headers['content-type'], body: new URLSearchParams(data) });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status < 300 ? JSON.stringify({ id: 1, body: 'ok' }) : JSON.stringify({ message: `${status} error` }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'access-diff-note-'));
  try {
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(dir, 'report.md'), REPORT);
    if (stacksNote !== undefined) fs.writeFileSync(path.join(dir, 'changed-stacks.md'), stacksNote);
    // A plan job's saved plan (its artifact): the review reads the plans, not the syntheses.
    if (planned) {
      fs.mkdirSync(path.join(dir, 'secretstore-iac-plans'));
      fs.writeFileSync(path.join(dir, 'secretstore-iac-plans', 'ci-access.tfplan'), 'PK');
    }
    // The prepared diff: exit 1 (access changed), no risk flag.
    fs.writeFileSync(
      path.join(bin, 'npx'),
      '#!/bin/sh\necho "$*" >> args.txt\nwhile [ $# -gt 0 ]; do if [ "$1" = --risk-flag-count ]; then echo 0 > "$2"; fi; shift; done\ncat "$PREPARED_REPORT"\nexit 1\n',
      { mode: 0o755 },
    );
    const child = spawn('bash', ['-eo', 'pipefail', '-c', postingItem], {
      cwd: dir,
      env: {
        PATH: `${bin}:${process.env.PATH}`,
        HOME: dir,
        PREPARED_REPORT: path.join(dir, 'report.md'),
        CI_API_V4_URL: `http://127.0.0.1:${port}/api/v4`,
        CI_PROJECT_ID: '4242',
        CI_MERGE_REQUEST_IID: '17',
        CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main',
        ...env,
      },
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    const args = fs.existsSync(path.join(dir, 'args.txt')) ? fs.readFileSync(path.join(dir, 'args.txt'), 'utf8') : '';
    return { code, output, received, args };
  } finally {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('the access-diff job posts the diff as the merge request\'s note', () => {
  it('token set: POST .../projects/:id/merge_requests/:iid/notes with PRIVATE-TOKEN, the body is the diff; the token is never printed', async () => {
    const { code, output, received } = await runJob(201, { [TOKEN_VARIABLE]: TOKEN });
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('secretstore-iac: access diff posted as a note of !17') });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'POST', url: '/api/v4/projects/4242/merge_requests/17/notes', privateToken: TOKEN, contentType: 'application/x-www-form-urlencoded' });
    expect([...received[0].body.keys()]).toEqual(['body']);
    expect(received[0].body.get('body')).toBe(REPORT);
    // The diff is in the job log too.
    expect(output).toContain('| `ci-x` | secret/data/a+b & c=d%20 | **added** read ✓ |');
    expect(output).not.toContain(TOKEN);
  });

  it.each([401, 500])('an API error (%i) fails the job with a message naming the token variable, never the token', async (status) => {
    const { code, output, received } = await runJob(status, { [TOKEN_VARIABLE]: TOKEN });
    expect(received).toHaveLength(1);
    expect(code).toBe(1);
    expect(output).toContain(`returned error: ${status}`);
    expect(output).toContain(`secretstore-iac: posting the access diff as a note of !17 failed`);
    expect(output).toContain(`check ${TOKEN_VARIABLE}`);
    expect(output).not.toContain('access diff posted');
    expect(output).not.toContain(TOKEN);
  });

  it('the note shows the stacks the merge request plans, with their digests: the synth job\'s changed-stacks.md after the diff', async () => {
    const note = '### Stacks planned: 1 of 2\n\n| stack | change | planned |\n| --- | --- | --- |\n| `ci-access` | changed | yes |\n';
    const { code, received } = await runJob(201, { [TOKEN_VARIABLE]: TOKEN }, note);
    expect(code).toBe(0);
    expect(received[0].body.get('body')).toBe(`${REPORT}\n${note}`);
  });

  it('the note\'s access part is the review of the saved plans (access-diff --plans), not a comparison of two syntheses', async () => {
    const { code, received, args } = await runJob(201, { [TOKEN_VARIABLE]: TOKEN });
    expect(code).toBe(0);
    expect(args).toBe('secretstore-iac access-diff --plans secretstore-iac-plans --risk-flag-count access-risk-flags.txt\n');
    expect(received[0].body.get('body')).toBe(REPORT);
    expect(postingItem).not.toMatch(/cdktf\.base\.out|access-diff "\$base"/);
  });

  it('no saved plan (no stack selected): the note says nothing is planned, no risk flag, the diff is not run', async () => {
    const { code, received, args } = await runJob(201, { [TOKEN_VARIABLE]: TOKEN }, undefined, false);
    expect(code).toBe(0);
    expect(args).toBe('');
    expect(received[0].body.get('body')).toBe('## Access changes: none\n\nNo stack is planned (no saved plan in this pipeline): applying this merge request changes nothing on the store.\n');
  });

  it('token unset: no request, the diff is in the log and the job passes', async () => {
    const { code, output, received } = await runJob(201, {});
    expect(received).toEqual([]);
    expect(code).toBe(0);
    expect(output).toContain(`${TOKEN_VARIABLE} is not set`);
    expect(output).toContain('## Access diff');
  });
});
