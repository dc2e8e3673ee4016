import { execFileSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { RefSynthesizer } from '../../../lib/sources/ref-synthesizer';
import { SynthesisCache, synthesisCacheDir, synthesisKey } from '../../../lib/sources/synthesis-cache';
import { synthesisIdentity } from '../../../lib/sources/git-ref-synthesis';

/** The cache's secret, as a protected job has it: without one, no entry is read (a plain seal is recomputable). */
const TEST_CACHE_SECRET = 'test cache secret';

// One synthesis per tree: a command given git refs synthesizes each tree once per run, and with the
// synthesis cache (SECRETSTORE_IAC_SYNTH_CACHE) once per tree and library version across runs. The
// repository's synthesis command (cdktf.json `app`) counts its runs in a file outside the repository
// and writes an output with one stack whose content is the configuration file's.


const NOT_WRITTEN = (out: string) =>
  `OUTDIR ${out} exists and was not written by synth-ref (it is not an empty folder and has no secretstore-iac-source.json naming a ref and commit): not replaced; give a folder that does not exist yet, or remove ${out} yourself`;

describe('synthesis of git refs: each tree once per run, and once per cache', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-synth-cache-'));
  const repo = path.join(root, 'config');
  const counter = path.join(root, 'syntheses');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: repo, encoding: 'utf8' }).trim();
  const syntheses = () => (fs.existsSync(counter) ? fs.readFileSync(counter, 'utf8').split('\n').filter(Boolean).length : 0);
  const app = [
    `echo run >> ${JSON.stringify(counter)}`,
    'mkdir -p "$CDKTF_OUTDIR/stacks/one"',
    `printf '{"stacks":{"one":{"synthesizedStackPath":"stacks/one/cdk.tf.json","workingDirectory":"stacks/one"}}}' > "$CDKTF_OUTDIR/manifest.json"`,
    `node -e 'process.stdout.write(JSON.stringify({resource:{},"//":{metadata:{config:require("fs").readFileSync("config.txt","utf8")}}}))' > "$CDKTF_OUTDIR/stacks/one/cdk.tf.json"`,
  ].join(' && ');

  /** Runs the CLI in the repository, with the synthesis cache `.cache` unless `cache` is false. */
  async function cliWith(cache: boolean, ...args: string[]) {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const code = await runCli(args, { env: cache ? { SECRETSTORE_IAC_SYNTH_CACHE: '.cache', SECRETSTORE_IAC_SYNTH_CACHE_SECRET: TEST_CACHE_SECRET } : {}, cwd: repo, isTerminal: false, stdout: (l) => stdout.push(l), stderr: (l) => stderr.push(l) });
    return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
  }
  const cli = (...args: string[]) => cliWith(true, ...args);

  beforeAll(() => {
    fs.mkdirSync(path.join(repo, 'node_modules'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'cdktf.json'), JSON.stringify({ app }));
    fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n.cache/\n*.out/\n');
    fs.writeFileSync(path.join(repo, 'config.txt'), 'one\n');
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-q', '-m', 'one');
    // Another commit of the same tree (a merge, a revert of a revert): nothing to synthesize again.
    git('commit', '-q', '--allow-empty', '-m', 'same tree');
    git('branch', 'same');
    fs.writeFileSync(path.join(repo, 'config.txt'), 'two\n');
    git('commit', '-q', '-am', 'two');
  });

  beforeEach(() => {
    fs.rmSync(counter, { force: true });
    fs.rmSync(path.join(repo, '.cache'), { recursive: true, force: true });
  });

  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('the same tree twice in one run (two commits, two refs): one synthesis, one output', async () => {
    const synthesizer = new RefSynthesizer(repo);
    try {
      const [a, b] = await Promise.all([synthesizer.synthesize(git('rev-parse', 'same~1')), synthesizer.synthesize(git('rev-parse', 'same'))]);
      expect(a).toBe(b);
      expect(syntheses()).toBe(1);
      expect(synthesizer.synthesized).toBe(1);
      await synthesizer.synthesize(git('rev-parse', 'main'));
      expect(syntheses()).toBe(2);
    } finally {
      synthesizer.dispose();
    }
  });

  it('changed-stacks and access-diff given two refs of one tree synthesize it once (no cache)', async () => {
    expect(await cliWith(false, 'changed-stacks', 'same~1', 'same')).toMatchObject({ code: 0, stdout: '' });
    expect(syntheses()).toBe(1);
    expect((await cliWith(false, 'access-diff', 'same', 'same~1')).code).toBe(0);
    expect(syntheses()).toBe(2);
    expect(fs.existsSync(path.join(repo, '.cache'))).toBe(false);
  });

  it('with the cache, a tree synthesized by an earlier run is not synthesized again; another tree is', async () => {
    expect((await cli('changed-stacks', 'same', 'main')).stdout).toBe('one');
    expect(syntheses()).toBe(2);
    const second = await cli('changed-stacks', 'same~1', 'main');
    expect(second.stdout).toBe('one');
    expect(second.stderr).toContain('synthesized output from the synthesis cache');
    expect(syntheses()).toBe(2);
  });

  it('synth-ref writes the ref\'s output once into a directory, which changed-stacks reads and names by its ref', async () => {
    const r = await cli('synth-ref', 'same', 'base.out');
    expect(r).toMatchObject({ code: 0, stdout: `Synthesized same (${git('rev-parse', 'same').slice(0, 12)}) into base.out.` });
    expect(fs.existsSync(path.join(repo, 'base.out', 'manifest.json'))).toBe(true);
    expect((await cli('synth-ref', 'main', 'head.out')).code).toBe(0);
    expect(syntheses()).toBe(2);
    const md = await cli('changed-stacks', 'base.out', 'head.out', '--format', 'md');
    expect(md.stdout).toContain(`same (${git('rev-parse', 'same').slice(0, 12)})`);
    expect(syntheses()).toBe(2);
    // Again: from the cache; OUTDIR, a synthesized output, is replaced.
    expect((await cli('synth-ref', 'same~1', 'base.out')).stdout).toMatch(/into base\.out \(from the synthesis cache, seal verified: HMAC-SHA256 with SECRETSTORE_IAC_SYNTH_CACHE_SECRET\)\.$/);
    expect(syntheses()).toBe(2);
    fs.mkdirSync(path.join(repo, 'other'));
    fs.writeFileSync(path.join(repo, 'other', 'keep.txt'), 'mine');
    expect(await cli('synth-ref', 'main', 'other')).toMatchObject({ code: 2, stderr: expect.stringContaining(NOT_WRITTEN('other')) });
    expect(await cli('synth-ref', 'no-such-ref', 'x.out')).toMatchObject({ code: 2, stderr: expect.stringContaining('no-such-ref is not a git ref') });
  });

  // Issue 36: synth-ref wiped an OUTDIR that held any manifest.json, with exit 0.
  it('synth-ref never deletes a folder it did not write: a synthesized output of yours (manifest.json, no source record), a link', async () => {
    const mine = path.join(repo, 'mine.out');
    fs.mkdirSync(path.join(mine, 'stacks'), { recursive: true });
    fs.writeFileSync(path.join(mine, 'manifest.json'), '{"stacks":{}}');
    fs.writeFileSync(path.join(mine, 'notes.txt'), 'mine');
    expect(await cli('synth-ref', 'main', 'mine.out')).toMatchObject({ code: 2, stderr: expect.stringContaining(NOT_WRITTEN('mine.out')) });
    expect(fs.readFileSync(path.join(mine, 'notes.txt'), 'utf8')).toBe('mine');
    // A record that is not synth-ref's (no commit) does not count either.
    fs.writeFileSync(path.join(mine, 'secretstore-iac-source.json'), '{"ref":"main"}');
    expect((await cli('synth-ref', 'main', 'mine.out')).code).toBe(2);
    expect(fs.existsSync(path.join(mine, 'notes.txt'))).toBe(true);
    // A link to an output synth-ref wrote is not replaced through the link.
    expect((await cli('synth-ref', 'main', 'ours.out')).code).toBe(0);
    fs.symlinkSync(path.join(repo, 'ours.out'), path.join(repo, 'link.out'));
    expect(await cli('synth-ref', 'main', 'link.out')).toMatchObject({ code: 2, stderr: expect.stringContaining(NOT_WRITTEN('link.out')) });
    expect(fs.lstatSync(path.join(repo, 'link.out')).isSymbolicLink()).toBe(true);
    // An empty folder, and an output synth-ref wrote, are written.
    fs.mkdirSync(path.join(repo, 'empty.out'));
    expect((await cli('synth-ref', 'main', 'empty.out')).code).toBe(0);
    expect((await cli('synth-ref', 'same', 'ours.out')).code).toBe(0);
  });

  it('a cache that is a file (or lies under one) is named before any synthesis, with its fix, not met afterwards as EEXIST (issue 37)', async () => {
    const before = syntheses();
    fs.writeFileSync(path.join(repo, 'cache-file'), '');
    for (const dir of ['cache-file', 'cache-file/sub']) {
      const stdout: string[] = [];
      const stderr: string[] = [];
      const code = await runCli(['synth-ref', 'main', `from-${dir.replace('/', '-')}.out`], { env: { SECRETSTORE_IAC_SYNTH_CACHE: dir, SECRETSTORE_IAC_SYNTH_CACHE_SECRET: TEST_CACHE_SECRET }, cwd: repo, isTerminal: false, stdout: (l) => stdout.push(l), stderr: (l) => stderr.push(l) });
      expect({ dir, code }).toEqual({ dir, code: 2 });
      expect(stderr.join('\n')).toContain(`SECRETSTORE_IAC_SYNTH_CACHE=${dir}: the synthesis cache cannot be written (${path.join(repo, 'cache-file')}${dir === 'cache-file' ? '' : ', above it,'} is a file, not a directory)`);
      expect(stderr.join('\n')).not.toMatch(/EEXIST|ENOTDIR/);
    }
    expect(syntheses()).toBe(before);
    fs.rmSync(path.join(repo, 'cache-file'));
  });

  it('a corrupt entry (a file changed, missing, added; an unreadable record) is ignored, removed and synthesized again', async () => {
    const commit = git('rev-parse', 'main');
    const cache = new SynthesisCache(path.join(root, 'cache'), 16, TEST_CACHE_SECRET);
    const key = synthesisKey(await synthesisIdentity(commit, repo, '0.0.0-test'));
    const entry = path.join(cache.dir, key);
    const corruptions: Array<[string, () => void]> = [
      ['differs from its recorded digest', () => fs.writeFileSync(path.join(entry, 'out', 'stacks', 'one', 'cdk.tf.json'), '{}')],
      ['no manifest.json', () => fs.rmSync(path.join(entry, 'out', 'manifest.json'))],
      ['its files are not the ones recorded', () => fs.writeFileSync(path.join(entry, 'out', 'extra.tf.json'), '{}')],
      ['entry.json unreadable', () => fs.writeFileSync(path.join(entry, 'entry.json'), '{"format":')],
      // Issue 36: a file edited together with its recorded digest was served as is.
      [
        'its seal does not verify',
        () => {
          const file = path.join(entry, 'out', 'stacks', 'one', 'cdk.tf.json');
          fs.writeFileSync(file, '{"resource":{}}');
          const record = JSON.parse(fs.readFileSync(path.join(entry, 'entry.json'), 'utf8'));
          record.files['stacks/one/cdk.tf.json'] = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
          fs.writeFileSync(path.join(entry, 'entry.json'), JSON.stringify(record));
        },
      ],
      [
        'records an identity of another key',
        () => {
          const record = JSON.parse(fs.readFileSync(path.join(entry, 'entry.json'), 'utf8'));
          record.identity.tree = 'another';
          fs.writeFileSync(path.join(entry, 'entry.json'), JSON.stringify(record));
        },
      ],
    ];
    for (const [why, corrupt] of corruptions) {
      const first = new RefSynthesizer(repo, cache, undefined, '0.0.0-test');
      const out = await first.synthesize(commit);
      first.dispose();
      fs.rmSync(counter, { force: true });
      expect(out).toBe(path.join(entry, 'out'));
      expect(cache.lookup(key)).toBe(out);
      corrupt();
      const progress: string[] = [];
      const again = new RefSynthesizer(repo, cache, (l) => progress.push(l), '0.0.0-test');
      const out2 = await again.synthesize(commit);
      again.dispose();
      expect([why, progress.find((l) => l.includes('corrupt entry'))]).toEqual([why, expect.stringContaining(why)]);
      expect([why, syntheses()]).toEqual([why, 1]);
      expect(JSON.parse(fs.readFileSync(path.join(out2, 'stacks', 'one', 'cdk.tf.json'), 'utf8'))['//'].metadata.config).toBe('two\n');
    }
  });

  it('the key follows the tree and the library version: another locked library is another entry', async () => {
    const identity = await synthesisIdentity(git('rev-parse', 'main'), repo, '0.0.0-test');
    expect(identity.tree).toBe(git('rev-parse', 'main^{tree}'));
    expect(synthesisKey(identity)).toMatch(/^[0-9a-f]{64}$/);
    expect(synthesisKey({ ...identity, library: `${identity.library}-other` })).not.toBe(synthesisKey(identity));
    expect(synthesisKey({ ...identity, tree: git('rev-parse', 'same^{tree}') })).not.toBe(synthesisKey(identity));
  });

  it('keeps the most recently used entries only', async () => {
    const cache = new SynthesisCache(path.join(root, 'small'), 2, TEST_CACHE_SECRET);
    const output = path.join(root, 'cache-src');
    fs.mkdirSync(output, { recursive: true });
    fs.writeFileSync(path.join(output, 'manifest.json'), '{"stacks":{}}');
    const identities = ['a', 'b', 'c'].map((tree) => ({ tree, library: 'l' }));
    identities.forEach((identity, i) => {
      cache.store(identity, output);
      // Used one after the other, a minute apart.
      const t = new Date(Date.now() - (identities.length - i) * 60_000);
      fs.utimesSync(path.join(cache.dir, synthesisKey(identity), 'entry.json'), t, t);
    });
    expect(identities.map((i) => cache.lookup(synthesisKey(i)) !== undefined)).toEqual([false, true, true]);
  });

  it('with a secret, an entry is used only when sealed with it: one resealed without it (digests and seal recomputed) is refused', () => {
    const output = path.join(root, 'sealed-src');
    fs.mkdirSync(path.join(output, 'stacks', 'one'), { recursive: true });
    fs.writeFileSync(path.join(output, 'manifest.json'), '{"stacks":{}}');
    fs.writeFileSync(path.join(output, 'stacks', 'one', 'cdk.tf.json'), '{}');
    const identity = { tree: 't', library: 'l' };
    const key = synthesisKey(identity);
    const dir = path.join(root, 'sealed');
    const sealed = new SynthesisCache(dir, 4, 'the secret');
    expect(sealed.lookup(key)).toBeUndefined();
    sealed.store(identity, output);
    expect(sealed.lookup(key)).toBe(path.join(dir, key, 'out'));
    // The same entry, read without the secret or with another: refused (and removed).
    const progress: string[] = [];
    expect(new SynthesisCache(dir, 4, 'another').lookup(key, (l) => progress.push(l))).toBeUndefined();
    expect(progress.join('\n')).toContain('its seal does not verify with SECRETSTORE_IAC_SYNTH_CACHE_SECRET');
    // Written by someone without the secret (an unprotected job): never read with it.
    new SynthesisCache(dir, 4).store(identity, output);
    expect(sealed.lookup(key)).toBeUndefined();
  });

  it('without a secret, no entry is read: a plain SHA-256 seal is one anyone who can write the cache recomputes (issue 45)', () => {
    const output = path.join(root, 'plain-out');
    fs.mkdirSync(path.join(output, 'stacks', 'one'), { recursive: true });
    fs.writeFileSync(path.join(output, 'manifest.json'), '{"stacks":{}}');
    fs.writeFileSync(path.join(output, 'stacks', 'one', 'cdk.tf.json'), '{"resource":{"vault_policy":{"p":{"name":"registry-ci","policy":"x"}}}}');
    const identity = { tree: 'plain', library: 'l' };
    const key = synthesisKey(identity);
    const dir = path.join(root, 'plain');
    const plain = new SynthesisCache(dir, 4);
    plain.store(identity, output);
    // Forged as an attacker would: the file edited, its digest and the plain seal recomputed.
    const entry = path.join(dir, key);
    const forged = '{"resource":{"vault_policy":{"p":{"name":"registry-ci","policy":"path \\"secret/*\\" {\\n  capabilities = [\\"read\\"]\\n}"}}}}';
    fs.writeFileSync(path.join(entry, 'out', 'stacks', 'one', 'cdk.tf.json'), forged);
    const record = JSON.parse(fs.readFileSync(path.join(entry, 'entry.json'), 'utf8'));
    record.files['stacks/one/cdk.tf.json'] = createHash('sha256').update(forged).digest('hex');
    const text = JSON.stringify([record.format, record.key, record.identity.tree, record.identity.library, Object.entries(record.files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
    record.seal = `sha256:${createHash('sha256').update(text).digest('hex')}`;
    fs.writeFileSync(path.join(entry, 'entry.json'), JSON.stringify(record));
    const progress: string[] = [];
    expect(plain.lookup(key, (l) => progress.push(l))).toBeUndefined();
    expect(plain.latest((l) => progress.push(l))).toBeUndefined();
    expect(progress).toEqual([
      `synthesis cache: the entry ${key.slice(0, 12)} is not read: SECRETSTORE_IAC_SYNTH_CACHE_SECRET is not set, so an entry's seal is a plain SHA-256 anyone who can write the cache can compute again (unverified): synthesizing again`,
      'synthesis cache: not read: SECRETSTORE_IAC_SYNTH_CACHE_SECRET is not set, so an entry\'s seal is a plain SHA-256 anyone who can write the cache can compute again (unverified): nothing reused',
    ]);
    // With the secret the forged entry is refused too: its seal is not an HMAC of that secret.
    expect(new SynthesisCache(dir, 4, TEST_CACHE_SECRET).lookup(key)).toBeUndefined();
    // Only a use that trusts it no more than its own input reads it, and the log says "unverified".
    new SynthesisCache(dir, 4).store(identity, output);
    const shared = new SynthesisCache(dir, 4, undefined, 'a test\'s own input');
    expect(shared.lookup(key)).toBe(path.join(dir, key, 'out'));
    expect(shared.verification).toBe('unverified: a plain SHA-256 seal, read only for a test\'s own input');
  });

  it('the commands keep a protected job\'s entries apart and seal them with the secret the job has', async () => {
    const run = (env: Record<string, string>, out: string) =>
      runCli(['synth-ref', 'main', out], { env: { SECRETSTORE_IAC_SYNTH_CACHE: '.cache', ...env }, cwd: repo, isTerminal: false, stdout: () => undefined, stderr: () => undefined });
    expect(await run({ CI_COMMIT_REF_PROTECTED: 'true', SECRETSTORE_IAC_SYNTH_CACHE_SECRET: 's3cret' }, 'p.out')).toBe(0);
    expect(await run({ CI_COMMIT_REF_PROTECTED: 'false' }, 'u.out')).toBe(0);
    const entries = (sub: string) => fs.readdirSync(path.join(repo, '.cache', sub)).filter((e) => /^[0-9a-f]{64}$/.test(e));
    expect(entries('protected')).toHaveLength(1);
    expect(entries('unprotected')).toHaveLength(1);
    const seal = (sub: string) => JSON.parse(fs.readFileSync(path.join(repo, '.cache', sub, entries(sub)[0], 'entry.json'), 'utf8')).seal;
    expect(seal('protected')).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(seal('unprotected')).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(JSON.stringify(fs.readdirSync(path.join(repo, '.cache'), { recursive: true }))).not.toContain('s3cret');
  });

  it('a job of a protected ref and one of an unprotected ref use separate cache folders; outside CI, the folder given', () => {
    expect(synthesisCacheDir('/c', { CI_COMMIT_REF_PROTECTED: 'true' })).toBe(path.join('/c', 'protected'));
    expect(synthesisCacheDir('/c', { CI_COMMIT_REF_PROTECTED: 'false' })).toBe(path.join('/c', 'unprotected'));
    expect(synthesisCacheDir('/c', {})).toBe('/c');
  });
});
