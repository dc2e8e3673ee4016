import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from '../../support/paths';

// Issue 29: only the seam lib/framework/ knows which CDK for Terraform it runs on (cdktf 0.21 by
// default, CDK Terrain's cdktn in scripts/framework-compare.js, which rewrites these two files and
// nothing else). Everything else of the library, the platform stacks, the CLI and the examples
// reaches the framework and the provider classes through it, so the domain model stays framework-free.

const SEAM = ['lib/framework/framework.ts', 'lib/framework/vault-provider.ts'];
const SCANNED = ['lib', 'stacks', 'bin', 'examples'];

/** A module name of a framework or of its provider bindings: cdktf, cdktn, @cdktf/*, @cdktn/*. */
const FRAMEWORK_MODULE = /^(cdktf|cdktn)(\/.*)?$|^@(cdktf|cdktn)\//;

/** Every module name a TypeScript text imports or requires (static, dynamic, type-only, re-export). */
function importedModules(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|[\s;])(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm)) {
    found.push(m[1] ?? m[2] ?? m[3] ?? m[4]);
  }
  return found;
}

/** The TypeScript files under a repository folder, by path relative to the repository. */
function tsFiles(dir: string): string[] {
  const abs = path.join(REPO_ROOT, dir);
  return fs.readdirSync(abs, { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return tsFiles(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

/** Files outside the seam that import a framework module, each as `file: module`. */
function frameworkImportsOutsideSeam(files: Record<string, string>): string[] {
  return Object.entries(files)
    .filter(([file]) => !SEAM.includes(file))
    .flatMap(([file, text]) => importedModules(text).filter((m) => FRAMEWORK_MODULE.test(m)).map((m) => `${file}: ${m}`));
}

// Text inside the renderers' template literals (generated Playwright files import '@playwright/test')
// is not an import of the library; framework modules never appear there either, so it is scanned too.
const sources = Object.fromEntries(SCANNED.flatMap(tsFiles).map((f) => [f, fs.readFileSync(path.join(REPO_ROOT, f), 'utf8')]));

describe('One framework seam: lib/framework/ is the only module that names cdktf, cdktn or their provider packages', () => {
  it('no file of lib/, stacks/, bin/ or examples/ outside the seam imports cdktf, cdktn, @cdktf/* or @cdktn/*', () => {
    expect(Object.keys(sources).length).toBeGreaterThan(100);
    expect(frameworkImportsOutsideSeam(sources)).toEqual([]);
  });

  it('the seam is where the framework is: framework.ts re-exports cdktf, vault-provider.ts the prebuilt provider modules', () => {
    expect(importedModules(sources[SEAM[0]])).toEqual(['cdktf', 'cdktf']);
    const vault = importedModules(sources[SEAM[1]]);
    expect(vault.length).toBeGreaterThan(0);
    expect(vault.every((m) => /^@cdktf\/provider-vault\/lib\/[a-z0-9-]+$/.test(m))).toBe(true);
  });

  it('the seam itself imports nothing else of lib/ (it sits below every folder)', () => {
    for (const file of SEAM) expect(importedModules(sources[file]).filter((m) => m.startsWith('.'))).toEqual([]);
  });

  it('finds every form of framework import (the check itself works)', () => {
    const offending = {
      'lib/model/a.ts': "import { App } from 'cdktf';",
      'lib/acl/b.ts': "import type { TerraformStack } from 'cdktn';",
      'lib/access/c.ts': "export { Policy } from '@cdktf/provider-vault/lib/policy';",
      'lib/model/d.ts': "const g = require('@cdktn/provider-generator');",
      'lib/model/e.ts': "const m = await import('cdktf/lib/terraform-stack');",
      'lib/model/f.ts': "import {\n  Token,\n} from 'cdktn';",
      'lib/model/g.ts': "import { Construct } from 'constructs';\nimport * as x from '../private/x';",
      'lib/acl/h.ts': "parser ??= import('@cdktn/hcl2json');",
      [SEAM[0]]: "export { App } from 'cdktf';",
    };
    expect(frameworkImportsOutsideSeam(offending)).toEqual([
      'lib/model/a.ts: cdktf',
      'lib/acl/b.ts: cdktn',
      'lib/access/c.ts: @cdktf/provider-vault/lib/policy',
      'lib/model/d.ts: @cdktn/provider-generator',
      'lib/model/e.ts: cdktf/lib/terraform-stack',
      'lib/model/f.ts: cdktn',
      'lib/acl/h.ts: @cdktn/hcl2json',
    ]);
  });
});

describe('the CDK Terrain build has the library\'s other runtime dependencies (tools/cdktn/package.json)', () => {
  it('every runtime dependency of the library but the cdktf framework is pinned there at the same version', () => {
    const own = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).dependencies as Record<string, string>;
    const cdktn = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'tools', 'cdktn', 'package.json'), 'utf8')).dependencies as Record<string, string>;
    const needed = Object.entries(own).filter(([name]) => !FRAMEWORK_MODULE.test(name) && name !== 'constructs');
    expect(needed.length).toBeGreaterThan(0);
    for (const [name, version] of needed) expect({ name, version: cdktn[name] }).toEqual({ name, version });
  });
});
