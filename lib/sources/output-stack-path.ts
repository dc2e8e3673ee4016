import * as fs from 'fs';
import * as path from 'path';

/**
 * The path a synthesized output's `manifest.json` gives for a stack (its `synthesizedStackPath` or
 * `workingDirectory`), confined to the output's `stacks/` folder: a relative path that stays inside
 * `<outdir>/stacks/` once resolved, with no symbolic link (of the path, of `stacks/`) leading out. A
 * manifest is an input like any other: one naming `../../etc/passwd` had `moves` and `access-diff`
 * read and quote that file.
 * @param manifestFile the manifest, for the message
 * @param stack the stack's name in the manifest
 * @param field the manifest field that gives the path
 * @throws Error naming the manifest, the stack, the field and the value when the path leads outside
 *   the output's `stacks/` folder or cannot be read there
 */
export function confinedStackPath(outdir: string, value: unknown, manifestFile: string, stack: string, field: string): string {
  const refuse = (why: string) =>
    new Error(`${manifestFile}: stack ${JSON.stringify(stack)}: "${field}" ${JSON.stringify(value)} ${why}: a synthesized output names its stacks' files inside its stacks/ folder; synthesize again`);
  if (typeof value !== 'string' || value === '') throw refuse('is not a relative path');
  if (path.isAbsolute(value)) throw refuse('is an absolute path');
  const stacksDir = path.resolve(outdir, 'stacks');
  const resolved = path.resolve(outdir, value);
  if (!resolved.startsWith(`${stacksDir}${path.sep}`)) throw refuse(`leads outside ${stacksDir}${path.sep}`);
  let real: string;
  let realStacks: string;
  try {
    realStacks = fs.realpathSync(stacksDir);
    real = fs.realpathSync(resolved);
  } catch (e) {
    throw refuse(`cannot be read (${(e as Error).message})`);
  }
  // A symbolic link (the file, a folder on the way, stacks/ itself) may not lead out.
  if (realStacks !== path.join(fs.realpathSync(outdir), 'stacks') || !real.startsWith(`${realStacks}${path.sep}`)) throw refuse(`leads outside ${stacksDir}${path.sep} through a symbolic link`);
  return resolved;
}
