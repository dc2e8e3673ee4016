#!/usr/bin/env node
// Copies the shell and awk files of lib/ (read at run time by the renderers, see
// lib/private/render-asset.ts) next to the modules tsc compiled: lib/**/*.{sh,awk} to <outDir>/lib/.
// Usage: node scripts/copy-assets.js [outDir]   (default: dist, tsconfig.json's outDir)
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const outDir = path.resolve(root, process.argv[2] || 'dist');

function copy(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const from = path.join(dir, entry.name);
    if (entry.isDirectory()) copy(from);
    else if (/\.(sh|awk)$/.test(entry.name)) {
      const to = path.join(outDir, path.relative(root, from));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(from, to);
    }
  }
}

copy(path.join(root, 'lib'));
