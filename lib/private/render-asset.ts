import * as fs from 'fs';
import * as path from 'path';

/**
 * Reads a static text file (shell, awk) that ships next to a renderer's module: `lib/render/x.sh`
 * beside `lib/render/x.ts` under ts-jest, `dist/lib/render/x.sh` beside `dist/lib/render/x.js` after
 * `npm run build` (tsc, then scripts/copy-assets.js).
 *
 * A plain `tsc` build has no copy (`npx tsc -p tsconfig.json && node dist/stacks/main.js`, which the
 * synthesis of a git ref runs on older and newer commits alike): from `<root>/dist/lib/...` the file is
 * then read from the source tree `<root>/lib/...` next to it, which holds the same text.
 *
 * @param directory the calling module's `__dirname`
 * @param file the file's name, relative to `directory`
 * @throws Error naming both places looked at and the build command, when neither has the file
 */
export function readRenderAsset(directory: string, file: string): string {
  const candidates = [path.join(directory, file)];
  const parts = path.resolve(directory).split(path.sep);
  const dist = parts.lastIndexOf('dist');
  if (dist >= 0 && parts[dist + 1] === 'lib') {
    candidates.push([...parts.slice(0, dist), ...parts.slice(dist + 1), file].join(path.sep));
  }
  for (const candidate of candidates) {
    if (fs.existsSync(candidate)) return fs.readFileSync(candidate, 'utf8');
  }
  throw new Error(
    `${file} is missing (looked in ${candidates.join(' and ')}): build with npm run build, which copies lib/**/*.{sh,awk} next to the compiled modules`,
  );
}
