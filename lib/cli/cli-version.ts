import * as fs from 'fs';
import * as path from 'path';

/**
 * The library's version, from its package.json: the nearest one above this module named
 * `secretstore-iac` (the source tree and the built `dist/` sit at different depths below it).
 */
export function cliVersion(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'secretstore-iac' && typeof pkg.version === 'string') return pkg.version;
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}
