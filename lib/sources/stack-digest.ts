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
 * Files of a stack's working directory that the engine loads as configuration when it plans there:
 * `*.tf`, `*.tf.json` (and OpenTofu's `*.tofu`, `*.tofu.json`), and the variable files it reads
 * without being told (`terraform.tfvars[.json]`, `*.auto.tfvars[.json]`). So the digest covers what
 * the synthesis writes (`cdk.tf.json`) and what is written beside it for the pipeline to plan
 * (`moves.tf.json` of `secretstore-iac moves`, `adopt-imports.tf.json` of `adopt`), and never the
 * engine's own files (`.terraform/`, the lock file, saved plans), which differ between machines.
 * Like the engine, it skips names that start with `.` or `#`.
 */
const ENGINE_CONFIGURATION = /^(?:[^.#].*\.(?:tf|tofu)(?:\.json)?|terraform\.tfvars(?:\.json)?|[^.#].*\.auto\.tfvars(?:\.json)?)$/;

/** True when the engine loads `name`, a file of a stack's working directory, as configuration. */
export function isEngineConfigurationFile(name: string): boolean {
  return ENGINE_CONFIGURATION.test(name);
}

/**
 * The digest of the stack whose working directory is `dir`: SHA-256 over each configuration file
 * ({@link isEngineConfigurationFile}) in name order, as its name, its length and its bytes, so no two
 * different sets of files share a digest. The same synthesized content gives the same digest on
 * every machine, whatever the output directory is called or where it lies.
 * @throws Error naming the directory when it cannot be read
 */
export function stackDigest(dir: string): { digest: string; files: string[] } {
  let names: string[];
  try {
    names = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile() && isEngineConfigurationFile(e.name)).map((e) => e.name);
  } catch (e) {
    throw new Error(`cannot read the stack directory ${dir}: ${(e as Error).message}`);
  }
  const files = names.sort(compareStrings);
  const hash = createHash('sha256');
  for (const name of files) {
    const bytes = fs.readFileSync(path.join(dir, name));
    hash.update(`${name}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return { digest: `sha256:${hash.digest('hex')}`, files };
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
