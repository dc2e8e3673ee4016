import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { packageRoot } from '../../../lib/private/package-root';

// The package's root is found under its own name and under a team's scope (published to its own
// registry, `npm:@acme/secretstore-iac@...`), where `init` reads its stacks/ and version from.

function packageAt(name: string): { root: string; deep: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-package-root-'));
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name }));
  const deep = path.join(root, 'dist', 'lib', 'cli');
  fs.mkdirSync(deep, { recursive: true });
  return { root, deep };
}

describe('packageRoot', () => {
  it.each(['secretstore-iac', '@acme/secretstore-iac', '@acme-platform.team/secretstore-iac'])('finds a package named %s above a module', (name) => {
    const { root, deep } = packageAt(name);
    expect(packageRoot(deep)).toBe(root);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it.each(['other', '@acme/secretstore-iac-fork', 'acme/secretstore-iac'])('passes a package named %s by', (name) => {
    const { root } = packageAt(name);
    const outer = packageAt('@acme/secretstore-iac');
    const nested = path.join(outer.root, 'node_modules', 'x');
    fs.cpSync(root, nested, { recursive: true });
    expect(packageRoot(path.join(nested, 'dist', 'lib', 'cli'))).toBe(outer.root);
    for (const dir of [root, outer.root]) fs.rmSync(dir, { recursive: true, force: true });
  });
});
