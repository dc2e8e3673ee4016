#!/usr/bin/env node
// The manifest a registry consumer installs carries no install script. npm runs `prepack` before it
// packs or publishes and `postpack` after: `strip` (prepack) writes package.json without the
// lifecycle scripts npm runs on a consumer's install (preinstall, install, postinstall, prepare), so
// `npm install secretstore-iac` runs nothing of ours and npm 11 has no `install-scripts` warning to
// print; `restore` (postpack) puts the repository's package.json back byte for byte. `prepare` stays
// in the repository: a git URL dependency is a checkout without dist/, which npm builds with it
// (scripts/prepare.js). A pack that failed between the two leaves the original beside it; the next
// `strip` restores it first, so nothing is lost.
// Usage: node scripts/published-manifest.js strip|restore
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const manifestFile = path.join(root, 'package.json');
const originalFile = path.join(root, '.package.json.before-pack');
/** The scripts npm runs when a consumer installs a package (npm 11 lists `prepare` among them). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

function restore() {
  if (!fs.existsSync(originalFile)) return;
  fs.writeFileSync(manifestFile, fs.readFileSync(originalFile));
  fs.rmSync(originalFile);
}

/** Runs `strip` or `restore` (the command line's first argument). */
function main(command) {
  if (command === 'strip') {
    restore();
    const text = fs.readFileSync(manifestFile, 'utf8');
    const manifest = JSON.parse(text);
    const scripts = { ...(manifest.scripts ?? {}) };
    for (const name of INSTALL_SCRIPTS) delete scripts[name];
    fs.writeFileSync(originalFile, text);
    fs.writeFileSync(manifestFile, `${JSON.stringify({ ...manifest, scripts }, null, 2)}\n`);
  } else if (command === 'restore') {
    restore();
  } else {
    console.error(`published-manifest: usage: node scripts/published-manifest.js strip|restore (got ${JSON.stringify(command ?? '')})`);
    process.exit(2);
  }
}

if (require.main === module) main(process.argv[2]);
module.exports = { INSTALL_SCRIPTS };
