import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { compareStrings } from '../private/compare-strings';
import { confinedStackPath } from './output-stack-path';

/** One stack of a synthesized output, as {@link readStackDigests} sees it. */
export interface StackDigest {
  /** Stack name (the key of cdktf's `manifest.json`). */
  readonly name: string;
  /** `sha256:` and 64 hex digits: the digest of {@link files}, names and bytes. */
  readonly digest: string;
  /** The files of the stack's working directory the digest covers, sorted (`cdk.tf.json`, `moves.tf.json`). */
  readonly files: readonly string[];
  /** The stacks this one depends on (cdktf's `addDependency`), by name, sorted. */
  readonly dependencies: readonly string[];
}

/**
 * What the engine and the tool write into a stack's working directory as data, never as
 * configuration: a local state, its backup and errored copy, a crash log, saved plans, removals
 * lists, half-written files of a killed run. With the hidden names (`.terraform/`, the lock file),
 * which the engine never loads, they differ between machines and are not digested.
 */
const ENGINE_DATA = /^(?:terraform\.tfstate(?:\.\d+)?(?:\.backup)?|errored\.tfstate|crash\.log|.+\.tfplan|.+\.removals|.+\.writing-\d+)$/;

/**
 * True when `name`, a file of a stack's working directory, is digested: every file but the
 * engine's data and hidden names ({@link ENGINE_DATA}). Not a list of what the engine loads (it also
 * loads `#x.tf.json`, and a newer engine may load more): what the synthesis writes (`cdk.tf.json`),
 * what is written beside it for the pipeline to plan (`moves.tf.json` of `secretstore-iac moves`,
 * `adopt-imports.tf.json` of `adopt`, their seal) and anything else found there count.
 */
export function isDigestedFile(name: string): boolean {
  return !name.startsWith('.') && !ENGINE_DATA.test(name);
}

/**
 * The digest of the stack whose working directory is `dir`: SHA-256 over each configuration file
 * ({@link isDigestedFile}) in name order, as its name, its length and its bytes, so no two
 * different sets of files share a digest. The same synthesized content gives the same digest on
 * every machine, whatever the output directory is called or where it lies.
 * @throws Error naming the directory when it cannot be read
 */
export function stackDigest(dir: string): { digest: string; files: string[] } {
  let names: string[];
  try {
    names = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile() && isDigestedFile(e.name)).map((e) => e.name);
  } catch (e) {
    throw new Error(`cannot read the stack directory ${dir}: ${(e as Error).message}`);
  }
  const files = names.sort(compareStrings);
  return { digest: filesDigest(files.map((name) => ({ name, bytes: fs.readFileSync(path.join(dir, name)) }))), files };
}

/**
 * The digest {@link stackDigest} gives files already read: `sha256:` over each file in name order,
 * as its name, its length and its bytes. An engine run's fresh working directory names the digest of
 * what it laid with it (lib/engine/engine-working-directory.ts): the same as the stack's.
 */
export function filesDigest(files: ReadonlyArray<{ readonly name: string; readonly bytes: Buffer }>): string {
  const hash = createHash('sha256');
  for (const { name, bytes } of [...files].sort((a, b) => compareStrings(a.name, b.name))) {
    hash.update(`${name}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return `sha256:${hash.digest('hex')}`;
}

/**
 * The stacks of a synthesized output directory, each with its digest and its dependencies, read
 * from cdktf's `manifest.json` (its `workingDirectory` and `dependencies` per stack) and the stacks'
 * directories. Cheap: only the few configuration files of each stack are read, once.
 * @returns the stacks by name
 * @throws Error naming the file and what is wrong, every problem of the manifest at once
 */
export function readStackDigests(outdir: string): Map<string, StackDigest> {
  const manifestFile = path.join(outdir, 'manifest.json');
  let manifest: unknown;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  } catch (e) {
    throw new Error(`${manifestFile}: cannot read the synthesized stacks (${(e as Error).message})`);
  }
  const stacks = (manifest as { stacks?: unknown } | null)?.stacks;
  if (!stacks || typeof stacks !== 'object' || Array.isArray(stacks)) throw new Error(`${manifestFile}: no "stacks" object`);
  const entries = Object.entries(stacks as Record<string, { workingDirectory?: unknown; constructPath?: unknown; dependencies?: unknown }>);
  // cdktf records a dependency by its construct path; a top-level stack's path is its name.
  const byPath = new Map(entries.map(([name, e]) => [typeof e?.constructPath === 'string' ? e.constructPath : name, name]));
  const problems: string[] = [];
  const digests = new Map<string, StackDigest>();
  for (const [name, entry] of entries.sort(([a], [b]) => compareStrings(a, b))) {
    const workingDirectory = entry?.workingDirectory;
    if (typeof workingDirectory !== 'string' || path.isAbsolute(workingDirectory) || workingDirectory.split(/[\\/]/).includes('..')) {
      problems.push(`stack ${JSON.stringify(name)}: "workingDirectory" must be a relative path inside the output`);
      continue;
    }
    let stackDir: string;
    try {
      stackDir = confinedStackPath(outdir, workingDirectory, manifestFile, name, 'workingDirectory');
    } catch (e) {
      problems.push((e as Error).message.slice(manifestFile.length + 2));
      continue;
    }
    const declared = entry.dependencies ?? [];
    if (!Array.isArray(declared) || declared.some((d) => typeof d !== 'string')) {
      problems.push(`stack ${JSON.stringify(name)}: "dependencies" must be a list of stack paths`);
      continue;
    }
    const unknown = (declared as string[]).filter((d) => !byPath.has(d));
    if (unknown.length > 0) problems.push(`stack ${JSON.stringify(name)}: depends on ${unknown.map((d) => JSON.stringify(d)).join(', ')}, not a stack of this output`);
    const dependencies = (declared as string[]).filter((d) => byPath.has(d)).map((d) => byPath.get(d)!).sort(compareStrings);
    digests.set(name, { name, ...stackDigest(stackDir), dependencies });
  }
  if (problems.length > 0) throw new Error(`${manifestFile}: ${problems.join('; ')}`);
  return digests;
}
