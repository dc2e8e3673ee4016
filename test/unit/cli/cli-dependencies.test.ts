import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from '../../support/paths';

// The CLI runs where only the library's runtime dependencies may be installed (the operator commands
// on a deployment host, the pipeline's jobs): it must never load cdktf or the provider bindings,
// which only synthesis needs. Checked on the import graph of the sources, from the bin.

/** Every module a source file imports, relative ones resolved to files. */
function imports(file: string): { relative: string[]; packages: string[] } {
  const text = fs.readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/^(?:import|export)\s[^'"]*?from\s+'([^']+)'|require\('([^']+)'\)/gm)].map((m) => m[1] ?? m[2]);
  // Type-only imports vanish in the compiled JavaScript.
  const typeOnly = new Set([...text.matchAll(/^import type [^']*from '([^']+)'/gm)].map((m) => m[1]));
  const runtime = specs.filter((s) => !typeOnly.has(s));
  return {
    relative: runtime.filter((s) => s.startsWith('.')).map((s) => path.resolve(path.dirname(file), `${s}.ts`)),
    packages: runtime.filter((s) => !s.startsWith('.')),
  };
}

describe('the CLI loads no synthesis dependency', () => {
  it('no module reachable from bin/secretstore-iac.ts imports cdktf, @cdktf/* or constructs', () => {
    const seen = new Set<string>();
    const offenders: string[] = [];
    const visit = (file: string, via: string[]) => {
      if (seen.has(file)) return;
      seen.add(file);
      const { relative, packages } = imports(file);
      packages
        .filter((p) => p === 'cdktf' || p.startsWith('@cdktf/') || p === 'constructs')
        .forEach((p) => offenders.push(`${[...via, file].map((f) => path.relative(REPO_ROOT, f)).join(' -> ')} imports ${p}`));
      relative.filter((f) => fs.existsSync(f)).forEach((f) => visit(f, [...via, file]));
    };
    visit(path.join(REPO_ROOT, 'bin', 'secretstore-iac.ts'), []);
    expect(seen.size).toBeGreaterThan(30);
    expect(offenders).toEqual([]);
  });
});
