/**
 * Access-analysis benchmark (not a test): prints figures, asserts nothing.
 *
 * The platform plus 1,000 generated applications is synthesized through the library (base); head
 * adds an application, widens one application's grant to a wildcard over everyone's secrets and
 * raises one TTL. Then, target under 0.5 s each:
 * - `access` on base: read the output, parse policies, build ACLs, render Markdown;
 * - `access-diff` base head: the same for both sides, diff, risk flags, render Markdown;
 * timed in-process (best and median of 7 runs, fresh parser each run) and as whole CLI processes
 * (node start-up included; median of 5).
 *
 * For comparison only: the same 1,000 policies written by hand (not the library's layout), which
 * go through the HCL parser package.
 *
 * Run: `npm run bench:access` (build, then `node dist/bench/access-bench.js`).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { diffAccess } from '../lib/access/access-diff';
import { renderAccessDiffMarkdown } from '../lib/access/access-diff-markdown';
import { AccessModel } from '../lib/access/access-model';
import { accessReport } from '../lib/access/access-report';
import { renderAccessReportMarkdown } from '../lib/access/access-report-markdown';
import { readStoreConfiguration } from '../lib/access/store-configuration';
import { PolicyParser } from '../lib/acl/policy-parser';
import { AppRoleApplication, Duration, postgresState, SecretStoreApp } from '../lib';
import { Grant } from '../lib/model/grant';
import { definePlatform } from '../lib/platform/platform';
import { platformConfig } from '../stacks/platform.config';

const APPLICATIONS = 1000;
const BIN = path.join(__dirname, '..', 'bin', 'secretstore-iac.js');

/** Synthesizes the platform with `APPLICATIONS` generated applications; `head` adds the changes. */
function synthesize(head: boolean): string {
  const outdir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'access-bench-')), 'cdktf.out');
  const app = new SecretStoreApp({ outdir });
  const platform = definePlatform(app, platformConfig, postgresState());
  const count = head ? APPLICATIONS + 1 : APPLICATIONS;
  for (let i = 0; i < count; i++) {
    const application = new AppRoleApplication(platform.appRoles, `gen-${i}`, {
      auth: platform.appRoles.appRoleAuth,
      name: `gen-${i}`,
      environment: 'bench',
      secrets: { config: ['api_key', 'endpoint'] },
      tokenTtl: head && i === 7 ? Duration.hours(20) : undefined,
    });
    if (head && i === 3) Grant.onPath(application, 'secret/data/acme/bench/*', ['read'], 'bench/widened');
  }
  app.synth();
  return outdir;
}

/** The base output with every library policy rewritten by hand (same rules, another layout). */
function handWritten(base: string): string {
  const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'access-bench-hcl-')), 'cdktf.out');
  fs.cpSync(base, copy, { recursive: true });
  for (const stack of fs.readdirSync(path.join(copy, 'stacks'))) {
    const file = path.join(copy, 'stacks', stack, 'cdk.tf.json');
    const document = JSON.parse(fs.readFileSync(file, 'utf8'));
    for (const policy of Object.values<{ policy: string }>(document.resource?.vault_policy ?? {})) {
      policy.policy = policy.policy.replace(/^# Policy.*\n/, '# written by hand\n').replace(/ {2}capabilities/g, '    capabilities');
    }
    fs.writeFileSync(file, JSON.stringify(document));
  }
  return copy;
}

async function access(dir: string): Promise<number> {
  const model = await AccessModel.load(readStoreConfiguration(dir), new PolicyParser());
  return renderAccessReportMarkdown(accessReport(model)).length;
}

async function accessDiff(base: string, head: string): Promise<number> {
  const parser = new PolicyParser();
  const [b, h] = await Promise.all([base, head].map((d) => AccessModel.load(readStoreConfiguration(d), parser)));
  return renderAccessDiffMarkdown(diffAccess(b, h), { base: 'base', head: 'head' }).length;
}

async function timeInProcess(label: string, runs: number, body: () => Promise<number>): Promise<void> {
  const times: number[] = [];
  let size = 0;
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    size = await body();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  report(label, times, `${(size / 1024).toFixed(0)} KiB of Markdown`);
}

function timeProcess(label: string, runs: number, args: string[]): void {
  const times: number[] = [];
  let status: number | null = null;
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    status = result.status;
  }
  report(label, times, `exit ${status}`);
}

function report(label: string, times: number[], note: string): void {
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  // eslint-disable-next-line no-console
  console.log(`${label.padEnd(46)} best ${sorted[0].toFixed(0).padStart(5)} ms  median ${median.toFixed(0).padStart(5)} ms  (${note})`);
}

async function main(): Promise<void> {
  const base = synthesize(false);
  const head = synthesize(true);
  const hcl = handWritten(base);
  // eslint-disable-next-line no-console
  console.log(`${APPLICATIONS} applications; ${os.cpus().length} CPUs; node ${process.version}; load ${os.loadavg()[0].toFixed(1)}`);
  await timeInProcess('access, in-process', 7, () => access(base));
  await timeInProcess('access-diff, in-process', 7, () => accessDiff(base, head));
  timeProcess('access, CLI process', 5, ['access', base]);
  timeProcess('access-diff, CLI process', 5, ['access-diff', base, head]);
  await timeInProcess('(hand-written policies) access, in-process', 3, () => access(hcl));
  timeProcess('(hand-written policies) access, CLI process', 3, ['access', hcl]);
  for (const dir of [base, head, hcl]) fs.rmSync(path.dirname(dir), { recursive: true, force: true });
}

void main();
