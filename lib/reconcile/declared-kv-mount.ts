import * as fs from 'fs';
import { KvVersion } from '../model/kv-mount';
import { compareStrings } from '../private/compare-strings';
import { DECLARED_KV_MOUNTS_METADATA_KEY, readSynthOutput } from '../sources/synth-output';

/** A KV mount that synthesized stacks rely on, with the version they declare. */
export interface DeclaredKvMount {
  /** Mount path without slashes (`secret`). */
  readonly path: string;
  /** Declared KV version. */
  readonly version: KvVersion;
  /** The stacks that declare it with this version, sorted. */
  readonly stacks: readonly string[];
}

/**
 * The KV mounts one stack's metadata records (`//.metadata["secretstore-iac-kv-mounts"]`, written
 * by the synthesis), sorted by path. A stack synthesized before the record existed has none.
 * @throws Error naming the stack when the record is not what the synthesis writes
 */
export function kvMountsOfStack(stack: string, metadata: Readonly<Record<string, unknown>>): DeclaredKvMount[] {
  const record = metadata[DECLARED_KV_MOUNTS_METADATA_KEY];
  if (record === undefined) return [];
  const bad = () => new Error(`stack ${stack}: //.metadata["${DECLARED_KV_MOUNTS_METADATA_KEY}"] is not what the synthesis writes: synthesize again`);
  if (!record || typeof record !== 'object' || Array.isArray(record)) throw bad();
  return Object.entries(record as Record<string, unknown>)
    .map(([path, entry]) => {
      const version = (entry as { version?: unknown } | null)?.version;
      if (!/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/.test(path) || (version !== 1 && version !== 2)) throw bad();
      return { path, version: version as KvVersion, stacks: [stack] };
    })
    .sort((a, b) => compareStrings(a.path, b.path));
}

/**
 * The KV mounts of a synthesized stack file (`cdk.tf.json`), for commands that run in one stack.
 * @throws Error naming the file when it cannot be read
 */
export function readStackKvMounts(stack: string, file: string): DeclaredKvMount[] {
  let document: { '//'?: { metadata?: Record<string, unknown> } };
  try {
    document = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as Error).message}`);
  }
  const metadata = document?.['//']?.metadata;
  return kvMountsOfStack(stack, metadata && typeof metadata === 'object' ? metadata : {});
}

/**
 * The KV mounts a synthesized output's stacks rely on (only `stacks` when given), one entry per
 * mount path and declared version, sorted by path: a path declared with two versions by two stacks
 * gives two entries.
 */
export function readDeclaredKvMounts(dir: string, stacks?: readonly string[]): DeclaredKvMount[] {
  const merged = new Map<string, DeclaredKvMount>();
  for (const s of readSynthOutput(dir)) {
    if (stacks !== undefined && !stacks.includes(s.name)) continue;
    for (const m of kvMountsOfStack(s.name, s.metadata)) {
      const key = `${m.path}\u0000${m.version}`;
      const seen = merged.get(key);
      merged.set(key, seen ? { ...seen, stacks: [...seen.stacks, s.name].sort(compareStrings) } : m);
    }
  }
  return [...merged.values()].sort((a, b) => compareStrings(a.path, b.path) || a.version - b.version);
}
