/**
 * `npm run bench:store` (bench/store-bench.ts) at a small size, on the store under test: the
 * benchmark really applies, plans and re-shards on a real dev store, selects only the changed stacks,
 * and its re-shard plans hold only imports and forgets; its pipeline scenarios add, change and remove
 * one application through the pipeline's commands with the pipeline roles' tokens. Its timings are
 * printed, never asserted here (speed is shown by the benchmark, not by a timed test).
 */
import { spawn } from 'node:child_process';
import { REPO_ROOT } from '../support/paths';
import { STORE_TOKEN_PATTERN } from '../support/store/store-facts';
import { storeKind } from '../support/store/toolchain-env';

const APPS = 24;
const SHARDS = 3;

describe('npm run bench:store (24 applications, 3 shards)', () => {
  let code: number | null;
  let output = '';

  beforeAll(async () => {
    code = await new Promise<number | null>((resolve) => {
      const args = ['run', 'bench:store', '--', '--store', storeKind(), '--apps', String(APPS), '--shards', String(SHARDS)];
      const child = spawn('npm', args, { cwd: REPO_ROOT, env: process.env });
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.on('close', resolve);
    });
  });

  /** The values of one row of the table, one per layout (single stack, then shards). */
  const row = (label: string): string[] => {
    const line = output.split('\n').find((l) => l.startsWith(label));
    expect({ label, found: line !== undefined }).toEqual({ label, found: true });
    return line!.slice(44).trim().split(/\s{2,}/);
  };

  it('exits 0 and prints both layouts side by side on the store under test', () => {
    expect({ code, tail: output.slice(-3000) }).toMatchObject({ code: 0 });
    expect(output).toMatch(new RegExp(`${storeKind() === 'vault' ? 'HashiCorp Vault' : 'OpenBao'} dev store on 127\\.0\\.0\\.1`));
    expect(row(`${APPS} applications`)).toEqual(['single stack', `${SHARDS} shards`]);
  });

  it('shards the applications: the mount stack plus one stack per shard', () => {
    expect(row('stacks')).toEqual(['1', String(1 + SHARDS)]);
  });

  it('one changed application selects its one stack in either layout (changed-stacks over digests)', () => {
    expect(row('  stacks selected')).toEqual(['1', '1']);
  });

  it('a re-shard of 10 applications plans only imports and forgets, in the shards they left and the one they join', () => {
    const actions = /re-shard plan actions \(sharded\): (.*)$/m.exec(output)?.[1];
    expect(actions).toBeDefined();
    const counts = Object.fromEntries(actions!.split(', ').map((part) => part.split(' ').reverse()));
    // Each moved application is a role and a policy: forgotten where it was, imported where it goes.
    expect(counts).toEqual({ forget: '20', import: '20' });
    const selected = Number(row('re-shard 10 apps: stacks selected')[1]);
    expect(selected).toBeGreaterThanOrEqual(2);
    expect(selected).toBeLessThanOrEqual(1 + SHARDS);
  });

  it('the pipeline scenarios: the raw write rate and apply from empty are printed with their ratio; one application added, changed and removed plans exactly its objects', () => {
    expect(output).toMatch(/app-roles, then 3 shards 2 at a time\s+\d+\.\d+ s\s+\d+\.\d\dx the raw write\+read time \(target <= 1\.30x\)/);
    // Where apply from empty spends its time: the engine's and the store's CPU, both measured (not 0).
    const cpu = /CPU: engine \+ provider, store\s+(\d+\.\d+) s\s+(\d+\.\d+) s; \(engine \+ store\) \/ \d+ cores = \d+\.\d+ s/.exec(output);
    expect(cpu).not.toBeNull();
    expect(Number(cpu![1])).toBeGreaterThan(0);
    expect(Number(cpu![2])).toBeGreaterThan(0);
    expect(output).toMatch(/each write read back, as the provider does\s+\d+\.\d+ s\s+CPU: store \d+\.\d+ s, client \d+\.\d+ s/);
    expect(output).toMatch(/ci-access: synthesized JSON \d+\.\d\d MB; no-change plan \(apply role\)\s+\d+\.\d+ s/);
    // The application's own role and policy; other stacks' changes (the pipeline roles' grants) are in place.
    expect(output).toMatch(/^ {4}add one: [^\n]*app-roles-\d\d[^\n]*; planned 2 to add, \d+ to change, 0 to destroy$/m);
    expect(output).toMatch(/^ {4}change one: app-roles-\d\d; planned 0 to add, 1 to change, 0 to destroy$/m);
    expect(output).toMatch(/^ {4}remove one: [^\n]*app-roles-\d\d[^\n]*; planned 0 to add, \d+ to change, 2 to destroy$/m);
    expect(output).toMatch(/add one against the 60 s target\s+MR \d+\.\d\dx\s+merge \d+\.\d\dx/);
  });

  it('prints no token', () => {
    expect(output).not.toMatch(STORE_TOKEN_PATTERN);
    expect(output).not.toMatch(/\b[0-9a-f]{48}\b/); // the dev store's root token
  });
});
