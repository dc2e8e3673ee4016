#!/usr/bin/env node
// `npm run package:check`: the package a configuration repository installs is what it should be.
// Packs it (prepack builds it), then checks: only the library, the CLI and the docs a user needs are
// in it, and every entry point the manifest names is there; the ecosystem's package linters agree
// (publint, @arethetypeswrong/cli); the public API is the one in api/secretstore-iac.api.md, so
// every API change shows in review (run `npm run api:update` and commit the report after a change).
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const { INSTALL_SCRIPTS } = require('./published-manifest');

const root = path.resolve(__dirname, '..');
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts });
const failures = [];

const manifestText = fs.readFileSync(path.join(root, 'package.json'), 'utf8');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-pack-'));
try {
  const [pack] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dir]));
  const files = pack.files.map((f) => f.path).sort();
  const allowed = /^(dist\/lib\/|dist\/bin\/|stacks\/[^/]+\.ts$|RULES\.md$|CHANGELOG\.md$|README\.md$|LICENSE$|package\.json$)/;
  const stray = files.filter((f) => !allowed.test(f));
  if (stray.length > 0) failures.push(`files a user does not need are packed: ${stray.slice(0, 10).join(', ')}${stray.length > 10 ? ', ...' : ''}`);
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const named = [manifest.main, manifest.types, ...Object.values(manifest.bin ?? {}), 'dist/lib/render/ci-login.sh', 'stacks/main.ts', 'stacks/platform.config.ts']
    .map((f) => f.replace(/^\.\//, ''));
  for (const f of named) if (!files.includes(f)) failures.push(`the manifest names ${f}, which is not packed`);
  if (manifest.private) failures.push('package.json says private: it cannot be published');
  if (!fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8').includes(`## ${manifest.version}`)) {
    failures.push(`CHANGELOG.md has no section for version ${manifest.version}`);
  }
  console.log(`package-check: ${pack.filename}: ${files.length} files, ${(pack.size / 1024).toFixed(0)} KiB packed`);
  const tarball = path.join(dir, pack.filename);
  // What a registry consumer installs: the packed manifest runs no script on install
  // (scripts/published-manifest.js), and packing gave the repository its package.json back unchanged.
  const packed = JSON.parse(run('tar', ['-xOzf', tarball, 'package/package.json']));
  const installScripts = INSTALL_SCRIPTS.filter((name) => packed.scripts?.[name] !== undefined);
  if (installScripts.length > 0) failures.push(`the packed package.json runs ${installScripts.join(', ')} on a consumer's install (scripts/published-manifest.js strips them)`);
  if (fs.readFileSync(path.join(root, 'package.json'), 'utf8') !== manifestText) failures.push('npm pack left package.json changed (postpack restores it: scripts/published-manifest.js)');
  if (fs.existsSync(path.join(root, '.package.json.before-pack'))) failures.push('npm pack left .package.json.before-pack behind (postpack removes it)');
  for (const [name, args] of [
    ['publint', ['publint', '--strict', tarball]],
    ['attw', ['attw', tarball, '--format', 'ascii']],
  ]) {
    try {
      run('npx', ['--no-install', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      console.log(`package-check: ${name}: no problems`);
    } catch (e) {
      failures.push(`${name} found problems:\n${e.stdout}${e.stderr}`);
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
try {
  run('npx', ['--no-install', 'api-extractor', 'run'], { stdio: ['ignore', 'pipe', 'pipe'] });
  console.log('package-check: api-extractor: the public API matches api/secretstore-iac.api.md');
} catch (e) {
  failures.push(`the public API differs from api/secretstore-iac.api.md (run \`npm run api:update\`, review and commit it):\n${e.stdout.split('\n').filter((l) => /Warning|Error|changed/i.test(l)).slice(0, 20).join('\n')}`);
}
if (failures.length > 0) {
  console.error(`package-check: ${failures.length} problem(s):\n${failures.map((f) => `  ${f}`).join('\n')}`);
  process.exit(1);
}
console.log('package-check: ok');
