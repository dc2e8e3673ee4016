import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readRenderAsset } from '../../../lib/private/render-asset';

describe('readRenderAsset', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-unit-asset-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };

  it('reads the file next to the module (ts-jest on lib/, or dist/ after npm run build)', () => {
    write('lib/render/a.sh', 'source\n');
    write('dist/lib/render/a.sh', 'copied\n');
    expect(readRenderAsset(path.join(root, 'lib', 'render'), 'a.sh')).toBe('source\n');
    expect(readRenderAsset(path.join(root, 'dist', 'lib', 'render'), 'a.sh')).toBe('copied\n');
  });

  it('names the place looked at and the build command when the file is not there', () => {
    write('lib/render/b.awk', 'program\n');
    expect(() => readRenderAsset(path.join(root, 'dist', 'lib', 'render'), 'b.awk')).toThrow(
      `b.awk is missing (looked in ${path.join(root, 'dist', 'lib', 'render', 'b.awk')}): build with npm run build`,
    );
  });
});

describe('scripts/copy-assets.js, run by npm run build and the cdktf app command after tsc', () => {
  const repo = path.join(__dirname, '..', '..', '..');
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-unit-assets-'));
  afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

  it('copies every .sh and .awk file of lib/ to the same place below the output directory', () => {
    execFileSync(process.execPath, [path.join(repo, 'scripts', 'copy-assets.js'), out]);
    const assets = (dir: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const p = path.join(dir, e.name);
        return e.isDirectory() ? assets(p) : /\.(sh|awk)$/.test(e.name) ? [p] : [];
      });
    const sources = assets(path.join(repo, 'lib')).map((f) => path.relative(repo, f)).sort();
    expect(sources).toEqual(expect.arrayContaining(['lib/render/ci-login.sh', 'lib/render/json-value.awk']));
    expect(assets(out).map((f) => path.relative(out, f)).sort()).toEqual(sources);
    for (const rel of sources) expect(fs.readFileSync(path.join(out, rel), 'utf8')).toBe(fs.readFileSync(path.join(repo, rel), 'utf8'));
  });

  it('is part of npm run build and of the cdktf app command', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
    const cdktf = JSON.parse(fs.readFileSync(path.join(repo, 'cdktf.json'), 'utf8'));
    // Incremental, its build info inside dist/: the compile of a fresh clone's `npm ci` (prepare) is the
    // only one; `npm run synth` after it finds nothing changed, and removing dist/ compiles everything.
    expect(pkg.scripts.build).toBe('tsc -p tsconfig.json --incremental --tsBuildInfoFile dist/.tsbuildinfo && node scripts/copy-assets.js');
    expect(pkg.scripts.synth).toMatch(/^npm run build && /);
    expect(cdktf.app).toBe('npx tsc -p tsconfig.json && node scripts/copy-assets.js && node dist/stacks/main.js');
  });
});
