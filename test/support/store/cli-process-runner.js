// Runs bin/secretstore-iac.ts as its own process from the sources (no build): each .ts file is
// transpiled when required (TypeScript's transpileModule, CommonJS, as tsconfig.json compiles it).
// For store tests that must signal the CLI itself (SIGKILL, Ctrl-C): test/support/store/cli-process.ts.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true, resolveJsonModule: true },
    fileName: filename,
  });
  module._compile(outputText, filename);
};
const bin = path.join(__dirname, '..', '..', '..', 'bin', 'secretstore-iac.ts');
process.argv = [process.argv[0], bin, ...process.argv.slice(2)];
require(bin);
