import * as fs from 'fs';
import * as path from 'path';

/** The file of a checkout that declares how its stacks are synthesized (`cdktf synth` reads it too). */
export const CDKTF_CONFIG_FILE = 'cdktf.json';

/**
 * The shell command that synthesizes the stacks of the checkout at `root`: the `app` field of its
 * cdktf.json, so that `cdktf synth` and the synthesis of a git ref run the one command the checkout
 * declares, whatever its commit.
 * @throws Error naming the file and the field when the file is missing or unreadable, or `app` is not
 *   a non-empty string
 */
export function readCdktfAppCommand(root: string): string {
  const file = path.join(root, CDKTF_CONFIG_FILE);
  let config: unknown;
  try {
    config = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: cannot read the synthesis command (${(e as Error).message})`);
  }
  const app = (config as { app?: unknown } | null)?.app;
  if (typeof app !== 'string' || app.trim() === '') {
    throw new Error(`${file}: "app" must be the command that synthesizes the stacks, a non-empty string`);
  }
  return app;
}

/**
 * The synthesis command of the checkout this library runs from (the nearest directory above it with
 * a cdktf.json), for help texts; undefined when there is none, e.g. in an installed package.
 */
export function ownCdktfAppCommand(): string | undefined {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, CDKTF_CONFIG_FILE))) {
      try {
        return readCdktfAppCommand(dir);
      } catch {
        return undefined;
      }
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}
