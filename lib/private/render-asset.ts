import * as fs from 'fs';
import * as path from 'path';

/**
 * Reads a static text file (shell, awk) that ships next to a renderer's module: `lib/render/x.sh`
 * beside `lib/render/x.ts` under ts-jest, `dist/lib/render/x.sh` beside `dist/lib/render/x.js` after
 * `npm run build` (tsc, then scripts/copy-assets.js; cdktf.json's `app`, which the synthesis of a git
 * ref runs, does the same).
 *
 * @param directory the calling module's `__dirname`
 * @param file the file's name, relative to `directory`
 * @throws Error naming the place looked at and the build command, when the file is not there
 */
export function readRenderAsset(directory: string, file: string): string {
  const candidate = path.join(directory, file);
  if (fs.existsSync(candidate)) return fs.readFileSync(candidate, 'utf8');
  throw new Error(
    `${file} is missing (looked in ${candidate}): build with npm run build, which copies lib/**/*.{sh,awk} next to the compiled modules`,
  );
}
