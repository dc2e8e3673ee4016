import * as fs from 'fs';
import * as path from 'path';
import { compareStrings } from '../private/compare-strings';
import { SynthesisArtifact } from './synthesis-artifact';

/** What {@link updateOutputDirectory} changed in the output directory, paths relative to it, sorted. */
export interface OutputUpdate {
  /** Files written: new, or whose bytes or mode differed. */
  readonly written: readonly string[];
  /** Files and stack directories removed: the synthesis no longer produces them. */
  readonly removed: readonly string[];
}

/** cdktf's file: the output is a synthesized output only while it is there (the readers check it). */
const MANIFEST = 'manifest.json';
/** Where the previous manifest waits while an update is under way; a later synthesis removes it. */
const HELD_MANIFEST = 'manifest.json.updating';
const STACKS = 'stacks';

/** Options of {@link updateOutputDirectory}. */
export interface OutputUpdateOptions {
  /**
   * Leave the directories of stacks the synthesis no longer produces in place (not listed as
   * removed): the cdktf CLI removes them itself after the app ran, and fails when one is gone already
   * (lib/app/cdktf-cli-run.ts).
   * @default false (removed whole)
   */
  readonly leaveRetiredStackDirectories?: boolean;
}

/**
 * Brings `finalDir` to what a synthesis produced, writing only the files whose bytes (or mode)
 * changed: an unchanged file keeps its inode and mtime, and a synthesis with no change writes nothing.
 *
 * `stagingDir` holds what cdktf wrote (`manifest.json`, `stacks/<name>/cdk.tf.json`) and is consumed;
 * `artifacts` are the library's files, compared in memory and staged only when they differ.
 *
 * Ownership, by the layout rule of the artifacts (lib/constructs/artifact-layout.ts): everything
 * outside `stacks/` is the synthesis's, so a file there that it no longer produces is removed (and
 * directories left empty); the directory of a stack it no longer produces is removed whole; in the
 * directory of a stack it still produces, only the files cdktf writes are its own, and everything
 * else (`.terraform/`, the lock file, saved plans, `adopt-imports.tf.json`, `moves.tf.json`) stays.
 *
 * Never half-written: when anything changes, `manifest.json` is first moved aside, each file is put
 * in place by a rename, and the manifest comes back last. An interrupted update leaves an output
 * without `manifest.json`, which every reader refuses as not synthesized, until the next synthesis
 * completes it; every file in it is whole, old or new. A first synthesis is one rename of the staging
 * directory.
 */
export function updateOutputDirectory(stagingDir: string, finalDir: string, artifacts: readonly SynthesisArtifact[], options: OutputUpdateOptions = {}): OutputUpdate {
  if (!fs.existsSync(finalDir)) {
    artifacts.forEach((a) => writeFile(path.join(stagingDir, ...a.path.split('/')), a.content, a.mode));
    fs.renameSync(stagingDir, finalDir);
    return { written: listFiles(finalDir).sort(compareStrings), removed: [] };
  }
  const produced = new Set<string>();
  const toWrite: string[] = [];
  const toChmod: { file: string; mode: number }[] = [];
  // cdktf's files are in the staging directory: keep those that differ there, for the renames.
  for (const rel of listFiles(stagingDir)) {
    produced.add(rel);
    if (!sameBytes(path.join(finalDir, rel), fs.readFileSync(path.join(stagingDir, rel)))) toWrite.push(rel);
  }
  for (const artifact of artifacts) {
    produced.add(artifact.path);
    const mode = artifact.mode ?? 0o644;
    const target = path.join(finalDir, ...artifact.path.split('/'));
    const content = Buffer.from(artifact.content);
    if (!sameBytes(target, content)) {
      writeFile(path.join(stagingDir, ...artifact.path.split('/')), content, mode);
      toWrite.push(artifact.path);
    } else if ((fs.statSync(target).mode & 0o7777) !== mode) {
      toChmod.push({ file: target, mode });
    }
  }
  const producedStacks = new Set([...produced].filter((p) => p.startsWith(`${STACKS}/`)).map((p) => p.split('/')[1]));
  const toRemove = obsolete(finalDir, produced, producedStacks).filter((rel) => !(options.leaveRetiredStackDirectories && rel.startsWith(`${STACKS}/`)));
  if (toWrite.length === 0 && toChmod.length === 0 && toRemove.length === 0) return { written: [], removed: [] };

  const manifest = path.join(finalDir, MANIFEST);
  const held = path.join(finalDir, HELD_MANIFEST);
  if (fs.existsSync(manifest)) fs.renameSync(manifest, held);
  // Removals first: a file that becomes a directory, or the reverse, is out of the way.
  for (const rel of toRemove) {
    fs.rmSync(path.join(finalDir, rel), { recursive: true, force: true });
    pruneEmptyParents(finalDir, path.dirname(rel));
  }
  for (const rel of toWrite) {
    if (rel === MANIFEST) continue;
    const target = path.join(finalDir, rel);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.renameSync(path.join(stagingDir, rel), target);
  }
  toChmod.forEach(({ file, mode }) => fs.chmodSync(file, mode));
  if (toWrite.includes(MANIFEST)) {
    fs.renameSync(path.join(stagingDir, MANIFEST), manifest);
    fs.rmSync(held, { force: true });
  } else if (fs.existsSync(held)) {
    fs.renameSync(held, manifest);
  }
  return { written: [...toWrite, ...toChmod.map((c) => path.relative(finalDir, c.file).split(path.sep).join('/'))].sort(compareStrings), removed: toRemove };
}

/** What the synthesis owns in `finalDir` and no longer produces (see {@link updateOutputDirectory}). */
function obsolete(finalDir: string, produced: ReadonlySet<string>, producedStacks: ReadonlySet<string>): string[] {
  const removed: string[] = [];
  for (const entry of fs.readdirSync(finalDir, { withFileTypes: true })) {
    if (entry.name === STACKS && entry.isDirectory()) {
      for (const stack of fs.readdirSync(path.join(finalDir, STACKS))) {
        if (!producedStacks.has(stack)) removed.push(`${STACKS}/${stack}`);
      }
    } else if (entry.isDirectory()) {
      listFiles(path.join(finalDir, entry.name), `${entry.name}/`).filter((f) => !produced.has(f)).forEach((f) => removed.push(f));
    } else if (!produced.has(entry.name)) {
      removed.push(entry.name);
    }
  }
  return removed.sort(compareStrings);
}

/** Files below `dir` (not directories), relative to it with `/`, each prefixed by `prefix`. */
function listFiles(dir: string, prefix = ''): string[] {
  const files: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) files.push(...listFiles(path.join(dir, entry.name), `${prefix}${entry.name}/`));
    else files.push(`${prefix}${entry.name}`);
  }
  return files;
}

/** True when `file` is a regular file holding exactly `content`; the size is compared before any read. */
function sameBytes(file: string, content: Buffer): boolean {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return false;
  }
  return stat.isFile() && stat.size === content.length && fs.readFileSync(file).equals(content);
}

function writeFile(file: string, content: string | Buffer, mode = 0o644): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content, { mode });
  // writeFileSync's mode is filtered by the umask: the artifact's mode is the one it declares.
  fs.chmodSync(file, mode);
}

/** Removes the directories from `rel` up that the removals left empty, never `root` itself. */
function pruneEmptyParents(root: string, rel: string): void {
  for (let dir = rel; dir !== '.' && dir !== ''; dir = path.dirname(dir)) {
    const full = path.join(root, dir);
    if (!fs.existsSync(full) || fs.readdirSync(full).length > 0) return;
    fs.rmdirSync(full);
  }
}
