import * as fs from 'fs';
import * as path from 'path';

/** Whether `name` is this package's name: `secretstore-iac`, unscoped or under a team's scope. */
function isPackageName(name: unknown): boolean {
  return typeof name === 'string' && /^(?:@[a-z0-9][a-z0-9._-]*\/)?secretstore-iac$/.test(name);
}

/**
 * The root of the `secretstore-iac` package this module belongs to: the nearest directory above
 * `from` whose package.json is named `secretstore-iac`, or `@SCOPE/secretstore-iac` as a team
 * publishes it to its own registry (the source tree, a build's `dist/` and an installed package sit
 * at different depths below it).
 * @throws Error naming the place looked from, when there is none
 */
export function packageRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file) && isPackageName((JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: unknown }).name)) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json of secretstore-iac above ${from}`);
  }
}
