import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Duration, SecretStoreApp, SecretStoreStack } from '../../../lib';
import { TerraformOutput, Token } from '../../../lib/framework/framework';
import { definePlatform } from '../../../lib/platform/platform';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { IncrementalSynthesis, RENDER_KEYS_FILE } from '../../../lib/sources/incremental-synthesis';
import { incrementalSummaryLine, parseIncrementalSummary } from '../../../lib/sources/incremental-synthesis-summary';
import { SYNTH_CACHE_SECRET_VARIABLE, SYNTH_CACHE_VARIABLE, SynthesisCache } from '../../../lib/sources/synthesis-cache';
import { platformConfig } from '../../support/platform-config';
import { SeededRandom } from '../../support/seeded-random';
import { outputFiles } from '../../support/synthesized-platform';

/** The cache's secret, as a protected job has it: without one, no entry is read (a plain seal is recomputable). */
const TEST_CACHE_SECRET = 'test cache secret';

// Issue 39: a stack whose inputs did not change since a synthesis the cache holds is not rendered
// again; its cdk.tf.json comes from that synthesis. Reuse writes security policy, so the output of
// an incremental synthesis must be byte for byte the full synthesis's, whatever changed.

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-incremental-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let runs = 0;
const dir = (name: string) => path.join(root, `${name}-${++runs}`);

type Apps = Record<string, NonNullable<PlatformConfig['applications']>[string]>;

/** Synthesizes `config` into a fresh directory; returns it and the app. */
function synth(config: PlatformConfig, incremental: IncrementalSynthesis | false, extend?: (app: SecretStoreApp) => void): { outdir: string; app: SecretStoreApp } {
  const outdir = path.join(dir('out'), 'cdktf.out');
  const app = new SecretStoreApp({ outdir, incremental });
  definePlatform(app, config);
  extend?.(app);
  app.synth();
  return { outdir, app };
}

/** A cache holding the synthesis of `config` (with its render keys), as the synth job stores it. */
function cacheOf(config: PlatformConfig, library = 'test-1.0.0', secret: string = TEST_CACHE_SECRET): SynthesisCache {
  const cache = new SynthesisCache(dir('cache'), 16, secret);
  const { outdir } = synth(config, new IncrementalSynthesis(library));
  cache.store({ tree: `tree-${runs}`, library }, outdir);
  return cache;
}

/** The output without the record of render keys: what a full synthesis writes. */
function withoutRecord(outdir: string): Record<string, string> {
  const files = outputFiles(outdir);
  delete files[RENDER_KEYS_FILE];
  return files;
}

const ENVIRONMENTS = ['dev', 'prod', 'shared'];

/** A random, valid configuration: the shipped platform, random sharding, random applications. */
function randomConfig(random: SeededRandom): PlatformConfig {
  const apps: Apps = {};
  const count = 1 + random.int(10);
  for (let i = 0; i < count; i++) apps[`app-${i}`] = randomApp(random, i);
  const sharding = random.pick<PlatformConfig['applicationSharding']>([undefined, { by: 'environment' }, { by: 'hash', shards: 1 + random.int(5) }, { by: 'environment-hash', shards: 1 + random.int(3) }]);
  return { ...platformConfig, applications: apps, ...(sharding === undefined ? {} : { applicationSharding: sharding }) };
}

function randomApp(random: SeededRandom, i: number): Apps[string] {
  return {
    name: `svc${i}`,
    environment: random.pick(ENVIRONMENTS),
    ...(random.int(2) === 0 ? { tokenTtl: Duration.hours(1 + random.int(8)) } : {}),
    ...(random.int(3) === 0 ? { secrets: { config: ['api_key', ...(random.int(2) === 0 ? ['endpoint'] : [])] } } : {}),
  };
}

/** One random change of `config`, and what it was. */
function randomChange(random: SeededRandom, config: PlatformConfig): [string, PlatformConfig] {
  const apps: Apps = { ...(config.applications as Apps) };
  const ids = Object.keys(apps);
  const id = random.pick(ids);
  switch (random.int(8)) {
    case 0: {
      const next = ids.length + random.int(100);
      apps[`app-${next}`] = randomApp(random, next);
      return [`add app-${next}`, { ...config, applications: apps }];
    }
    case 1:
      delete apps[id];
      return [`remove ${id}`, { ...config, applications: apps }];
    case 2:
      apps[id] = { ...apps[id], tokenTtl: Duration.hours(9 + random.int(8)) };
      return [`tokenTtl of ${id}`, { ...config, applications: apps }];
    case 3:
      apps[id] = { ...apps[id], environment: ENVIRONMENTS.filter((e) => e !== apps[id].environment)[random.int(2)] };
      return [`environment of ${id}`, { ...config, applications: apps }];
    case 4:
      apps[id] = { ...apps[id], secrets: { other: ['token'] } };
      return [`secrets of ${id}`, { ...config, applications: apps }];
    case 5:
      return ['organisation', { ...config, settings: { ...config.settings, organisation: 'other' } }];
    case 6:
      return ['sharding', { ...config, applicationSharding: { by: 'hash', shards: 1 + random.int(6) } }];
    default:
      return ['CI job timeout', { ...config, ciJobTimeout: Duration.minutes(30 + random.int(60)) }];
  }
}

/** Edits a stack's `cdk.tf.json` inside a cache entry's output (a token TTL no configuration declares). */
function editCachedStack(entryOutdir: string, stack: string): void {
  const file = path.join(entryOutdir, 'stacks', stack, 'cdk.tf.json');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/"token_ttl": \d+/, '"token_ttl": 999999'));
}

describe('incremental synthesis: byte for byte the full synthesis', () => {
  it('for random configurations and random single changes, the incremental output is the full output', () => {
    const random = SeededRandom.fromEnvironment('incremental synthesis');
    let reused = 0;
    let rendered = 0;
    for (let i = 0; i < 12; i++) {
      const base = randomConfig(random);
      const [what, changed] = randomChange(random, base);
      const cache = cacheOf(base);
      const incremental = synth(changed, new IncrementalSynthesis('test-1.0.0', cache.latest()));
      const full = synth(changed, false);
      const fresh = synth(changed, new IncrementalSynthesis('test-1.0.0'));
      const context = `seed ${random.seed}, case ${i}: ${what}`;
      expect([context, withoutRecord(incremental.outdir)]).toEqual([context, outputFiles(full.outdir)]);
      // The record of render keys is the same whether stacks were reused or not.
      expect([context, outputFiles(incremental.outdir)]).toEqual([context, outputFiles(fresh.outdir)]);
      reused += incremental.app.lastIncremental!.reused.length;
      rendered += incremental.app.lastIncremental!.rendered.length;
    }
    // Not vacuous: stacks were reused, and changed ones rendered.
    expect(reused).toBeGreaterThan(0);
    expect(rendered).toBeGreaterThan(0);
  });
});

describe('incremental synthesis: what is reused, what is rendered', () => {
  const sharded: PlatformConfig = {
    ...platformConfig,
    applicationSharding: { by: 'hash', shards: 4 },
    applications: Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`app-${i}`, { name: `svc${i}`, environment: 'prod' }])),
  };
  const added: PlatformConfig = { ...sharded, applications: { ...sharded.applications, 'app-new': { name: 'new', environment: 'prod' } } };

  it('adding one application renders only its shard; every other stack is the cached one', () => {
    const cache = cacheOf(sharded);
    const before = cache.latest()!;
    const { app, outdir } = synth(added, new IncrementalSynthesis('test-1.0.0', before));
    const summary = app.lastIncremental!;
    expect(summary.rendered).toHaveLength(1);
    const [shard] = summary.rendered;
    expect(shard).toMatch(/^app-roles-0\d$/);
    expect(fs.readFileSync(path.join(outdir, 'stacks', shard, 'cdk.tf.json'), 'utf8')).toContain('"role_name": "new-prod"');
    expect(fs.readFileSync(path.join(before.outdir, 'stacks', shard, 'cdk.tf.json'), 'utf8')).not.toContain('new-prod');
    expect(summary.reused).toEqual(Object.keys(JSON.parse(fs.readFileSync(path.join(outdir, 'manifest.json'), 'utf8')).stacks).filter((s) => s !== shard).sort());
    expect(summary.from).toBe(`the synthesis cache entry ${before.key.slice(0, 12)}`);
    expect(parseIncrementalSummary(incrementalSummaryLine(summary))).toEqual({ rendered: 1, reused: summary.reused.length });
  });

  it('a changed input re-renders the stacks it reaches (the organisation: every stack but the bare AppRole mount\'s)', () => {
    const cache = cacheOf(sharded);
    const other = { ...sharded, settings: { ...sharded.settings, organisation: 'other' } };
    const { app, outdir } = synth(other, new IncrementalSynthesis('test-1.0.0', cache.latest()));
    // app-roles holds only the mount, which names no organisation: its bytes are the same.
    expect(app.lastIncremental!.reused).toEqual(['app-roles']);
    expect(app.lastIncremental!.rendered).toEqual(expect.arrayContaining(['ci-access', 'app-roles-00', 'app-roles-01', 'app-roles-02', 'app-roles-03']));
    expect(withoutRecord(outdir)).toEqual(outputFiles(synth(other, false).outdir));
  });

  it('a cached stack edited on disk is not reused: the entry does not verify and is removed', () => {
    const cache = cacheOf(sharded);
    const entry = cache.latest()!;
    editCachedStack(entry.outdir, 'app-roles-00');
    const progress: string[] = [];
    expect(cache.latest((l) => progress.push(l))).toBeUndefined();
    expect(progress.join('\n')).toMatch(/ignoring the corrupt entry .*stacks\/app-roles-00\/cdk.tf.json differs from its recorded digest/);
    const { app, outdir } = synth(added, new IncrementalSynthesis('test-1.0.0', cache.latest()));
    expect(app.lastIncremental).toMatchObject({ reused: [], from: 'no synthesis in the synthesis cache' });
    expect(withoutRecord(outdir)).toEqual(outputFiles(synth(added, false).outdir));
  });

  it('a cached stack edited after the entry verified is not reused: its bytes are checked as read', () => {
    const cache = cacheOf(sharded);
    const entry = cache.latest()!;
    editCachedStack(entry.outdir, 'app-roles-01');
    const { app, outdir } = synth(added, new IncrementalSynthesis('test-1.0.0', entry));
    expect(app.lastIncremental!.rendered).toContain('app-roles-01');
    expect(app.lastIncremental!.reused.length).toBeGreaterThan(0);
    expect(withoutRecord(outdir)).toEqual(outputFiles(synth(added, false).outdir));
  });

  it('render keys edited in a cache entry: the entry does not verify', () => {
    const cache = cacheOf(sharded);
    const entry = cache.latest()!;
    const file = path.join(entry.outdir, RENDER_KEYS_FILE);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/"sha256:[0-9a-f]{4}/, '"sha256:0000'));
    expect(cache.latest()).toBeUndefined();
  });

  it('an entry of another library version reuses nothing', () => {
    const cache = cacheOf(sharded, 'test-1.0.0');
    const { app } = synth(added, new IncrementalSynthesis('test-2.0.0', cache.latest()));
    expect(app.lastIncremental!.reused).toEqual([]);
    expect(app.lastIncremental!.from).toMatch(/was synthesized by library test-1\.0\.0, this is test-2\.0\.0: nothing reused/);
  });

  it('an entry sealed with another secret is not read; with the same secret it is (from the environment, as the synth job runs it)', () => {
    const cache = cacheOf(sharded, 'test-1.0.0', 'secret-a');
    const env = { [SYNTH_CACHE_VARIABLE]: cache.dir, [SYNTH_CACHE_SECRET_VARIABLE]: 'secret-b' };
    const other = synth(added, IncrementalSynthesis.fromEnvironment(env, 'test-1.0.0')!);
    expect(other.app.lastIncremental).toMatchObject({ reused: [], from: 'no synthesis in the synthesis cache' });
    const again = cacheOf(sharded, 'test-1.0.0', 'secret-a');
    const same = synth(added, IncrementalSynthesis.fromEnvironment({ ...env, [SYNTH_CACHE_VARIABLE]: again.dir, [SYNTH_CACHE_SECRET_VARIABLE]: 'secret-a' }, 'test-1.0.0')!);
    expect(same.app.lastIncremental!.reused.length).toBeGreaterThan(0);
    expect(IncrementalSynthesis.fromEnvironment({}, 'test-1.0.0')).toBeUndefined();
  });

  it('without the secret nothing is reused, and the log says why: a plain seal is one anyone who can write the cache recomputes (issue 45)', () => {
    const plain = cacheOf(sharded, 'test-1.0.0', undefined as unknown as string);
    const unkeyed = new SynthesisCache(plain.dir, 16);
    unkeyed.store({ tree: 'plain', library: 'test-1.0.0' }, synth(sharded, new IncrementalSynthesis('test-1.0.0')).outdir);
    const run = synth(added, IncrementalSynthesis.fromEnvironment({ [SYNTH_CACHE_VARIABLE]: plain.dir }, 'test-1.0.0')!);
    expect(run.app.lastIncremental).toMatchObject({ reused: [], from: expect.stringContaining('nothing reused: SECRETSTORE_IAC_SYNTH_CACHE_SECRET is not set, so the synthesis cache\'s entries are unverified') });
    expect(withoutRecord(run.outdir)).toEqual(outputFiles(synth(added, false).outdir));
  });

  it('a stack holding a value its key cannot name (a token other than a reference) is rendered every time, and records no key', () => {
    const withLazy = (app: SecretStoreApp) => {
      const stack = app.node.findChild('ci-access') as SecretStoreStack;
      new TerraformOutput(stack, 'lazy', { value: Token.asString({ resolve: () => 'computed', creationStack: [] }) });
    };
    const cache = new SynthesisCache(dir('cache'), 16, TEST_CACHE_SECRET);
    const first = synth(sharded, new IncrementalSynthesis('test-1.0.0'), withLazy);
    expect(Object.keys(JSON.parse(fs.readFileSync(path.join(first.outdir, RENDER_KEYS_FILE), 'utf8')).stacks)).not.toContain('ci-access');
    cache.store({ tree: 'lazy', library: 'test-1.0.0' }, first.outdir);
    const second = synth(sharded, new IncrementalSynthesis('test-1.0.0', cache.latest()), withLazy);
    expect(second.app.lastIncremental!.rendered).toEqual(['ci-access']);
    expect(fs.readFileSync(path.join(second.outdir, 'stacks', 'ci-access', 'cdk.tf.json'), 'utf8')).toContain('"value": "computed"');
  });

  it('a reference into another stack: both stacks are keyed on it (the output cdktf adds, the remote state it reads); byte for byte', () => {
    // A user's stack reading the AppRole mount's accessor: cdktf adds an output to app-roles and remote state to `reader`.
    const reader = (app: SecretStoreApp) => {
      const appRoles = app.node.findChild('app-roles') as SecretStoreStack;
      const stack = new SecretStoreStack(app, 'reader', { settings: appRoles.settings });
      const mount = appRoles.node.findChild('approle').node.findChild('backend') as unknown as { accessor: string };
      new TerraformOutput(stack, 'mount-accessor', { value: mount.accessor });
    };
    const cache = new SynthesisCache(dir('cache'), 16, TEST_CACHE_SECRET);
    const first = synth(sharded, new IncrementalSynthesis('test-1.0.0'), reader);
    expect(fs.readFileSync(path.join(first.outdir, 'stacks', 'reader', 'cdk.tf.json'), 'utf8')).toContain('terraform_remote_state');
    expect(fs.readFileSync(path.join(first.outdir, 'stacks', 'app-roles', 'cdk.tf.json'), 'utf8')).toContain('cross-stack-output-');
    expect(Object.keys(JSON.parse(fs.readFileSync(path.join(first.outdir, RENDER_KEYS_FILE), 'utf8')).stacks)).toEqual(expect.arrayContaining(['app-roles', 'reader']));
    cache.store({ tree: 'reader', library: 'test-1.0.0' }, first.outdir);
    const same = synth(added, new IncrementalSynthesis('test-1.0.0', cache.latest()), reader);
    expect(same.app.lastIncremental!.reused).toEqual(expect.arrayContaining(['app-roles', 'reader']));
    expect(withoutRecord(same.outdir)).toEqual(outputFiles(synth(added, false, reader).outdir));
    // The mount changes: app-roles (with its cross-stack output) renders again.
    const changed: PlatformConfig = { ...added, authMounts: { approle: { description: 'Application agents, changed' } } };
    const after = synth(changed, new IncrementalSynthesis('test-1.0.0', cache.latest()), reader);
    expect(after.app.lastIncremental!.rendered).toContain('app-roles');
    expect(withoutRecord(after.outdir)).toEqual(outputFiles(synth(changed, false, reader).outdir));
    // Without the reference, reader's JSON changes (no remote state): rendered.
    const plain = synth(added, new IncrementalSynthesis('test-1.0.0', cache.latest()), (app) => {
      const appRoles = app.node.findChild('app-roles') as SecretStoreStack;
      new TerraformOutput(new SecretStoreStack(app, 'reader', { settings: appRoles.settings }), 'mount-accessor', { value: 'literal' });
    });
    expect(plain.app.lastIncremental!.rendered).toEqual(expect.arrayContaining(['app-roles', 'reader']));
  });

  it('one app synthesized twice with more declared between: the second synthesis is checked on its own (what the first reused is forgotten)', () => {
    const cache = cacheOf(sharded);
    const outdir = path.join(dir('out'), 'cdktf.out');
    const app = new SecretStoreApp({ outdir, incremental: new IncrementalSynthesis('test-1.0.0', cache.latest()) });
    const platform = definePlatform(app, sharded);
    app.synth();
    expect(app.lastIncremental!.rendered).toEqual([]);
    platform.appRoles.addApplication('late', { name: 'late', environment: 'prod' });
    app.synth();
    expect(app.lastIncremental!.rendered).toHaveLength(1);
    expect(withoutRecord(outdir)).toEqual(outputFiles(synth({ ...sharded, applications: { ...sharded.applications, late: { name: 'late', environment: 'prod' } } }, false).outdir));
  });

  it('a full synthesis writes no record of render keys', () => {
    expect(Object.keys(outputFiles(synth(sharded, false).outdir))).not.toContain(RENDER_KEYS_FILE);
  });
});
