import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { resolveGitCommit, synthesizeGitRef } from '../../../lib/sources/git-ref-synthesis';

// A git ref is synthesized with the secretstore-iac its own package-lock.json installs: an upgrade of
// the library, compared as `access-diff origin/main HEAD` (the merge request's access-diff job), shows
// what the new version changes instead of comparing the new version with itself. A fake `npm` stands
// in for `npm ci` (it installs a marker of the locked version); the commit's synthesis command writes
// the version it finds into the output. The real upgrade through npm is proven in
// test/store/configuration-repository.store.test.ts.

const lockOf = (version: string) =>
  JSON.stringify({
    name: 'config',
    lockfileVersion: 3,
    packages: { '': { dependencies: { 'secretstore-iac': `^${version}` } }, 'node_modules/secretstore-iac': { version, resolved: `https://registry.npmjs.org/secretstore-iac/-/secretstore-iac-${version}.tgz`, integrity: `sha512-${version}` } },
  });

describe('synthesis of a git ref: with the library version the commit locks', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-gitref-'));
  const repo = path.join(root, 'config');
  const bin = path.join(root, 'bin');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: repo, encoding: 'utf8' }).trim();
  const savedPath = process.env.PATH;
  let base: string;
  let head: string;

  beforeAll(async () => {
    fs.mkdirSync(repo);
    fs.mkdirSync(bin);
    fs.writeFileSync(
      path.join(bin, 'npm'),
      ['#!/bin/sh', '[ "$1" = ci ] || exit 9', 'mkdir -p node_modules/secretstore-iac', `node -e 'console.log(require("./package-lock.json").packages["node_modules/secretstore-iac"].version)' > node_modules/secretstore-iac/version`, ''].join('\n'),
      { mode: 0o755 },
    );
    process.env.PATH = `${bin}${path.delimiter}${savedPath}`;
    fs.writeFileSync(path.join(repo, 'cdktf.json'), JSON.stringify({ app: 'mkdir -p "$CDKTF_OUTDIR" && cp node_modules/secretstore-iac/version "$CDKTF_OUTDIR/library-version"' }));
    fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n');
    fs.writeFileSync(path.join(repo, 'package-lock.json'), lockOf('0.2.0'));
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-q', '-m', 'configuration on 0.2.0');
    base = (await resolveGitCommit('HEAD', repo))!;
    // The upgrade, installed in the checkout.
    fs.writeFileSync(path.join(repo, 'package-lock.json'), lockOf('0.3.0'));
    git('commit', '-q', '-am', 'secretstore-iac 0.3.0');
    head = (await resolveGitCommit('HEAD', repo))!;
    fs.mkdirSync(path.join(repo, 'node_modules', 'secretstore-iac'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'node_modules', 'secretstore-iac', 'version'), '0.3.0\n');
  });

  afterAll(() => {
    process.env.PATH = savedPath;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('the base, which locks the version before the upgrade, is synthesized with that version (npm ci in its worktree)', async () => {
    const progress: string[] = [];
    const synthesized = await synthesizeGitRef(base, repo, (l) => progress.push(l));
    try {
      expect(fs.readFileSync(path.join(synthesized.outdir, 'library-version'), 'utf8')).toBe('0.2.0\n');
      expect(progress).toContain(`${base.slice(0, 12)} locks secretstore-iac 0.2.0 (this checkout: 0.3.0): installing its dependencies (npm ci)`);
    } finally {
      synthesized.dispose();
    }
  });

  it('a commit that locks what the checkout installed uses the checkout\'s node_modules (no install)', async () => {
    const progress: string[] = [];
    const synthesized = await synthesizeGitRef(head, repo, (l) => progress.push(l));
    try {
      expect(fs.readFileSync(path.join(synthesized.outdir, 'library-version'), 'utf8')).toBe('0.3.0\n');
      expect(progress.some((l) => l.includes('npm ci'))).toBe(false);
    } finally {
      synthesized.dispose();
    }
  });
});
