#!/usr/bin/env node
// npm's `prepare` script: builds dist/ when it is missing. A git URL dependency on this package
// (`git+https://HOST/acme/secretstore-iac.git#v0.2.0`) is a checkout without dist/: npm installs its
// dependencies and runs `prepare` (not `prepack`) before it packs it, so without this a git install
// has no library and no bin. An existing dist/ is kept (npm runs `prepare` twice for a git
// dependency, and on every `npm ci` of this repository): `npm run build` is what rebuilds it.
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
if (!fs.existsSync(path.join(root, 'dist', 'bin', 'secretstore-iac.js'))) {
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
}
