import * as fs from 'fs';
import * as path from 'path';
import { compareStrings } from '../private/compare-strings';
import { fileErrorText } from '../private/file-error-text';
import { confinedStackPath } from './output-stack-path';

/** A Terraform resource block as cdktf writes it (attributes plus cdktf's `//` metadata). */
export type ResourceBlock = Readonly<Record<string, unknown>>;

/** One synthesized stack: its name and its resources by type and id. */
export interface SynthStack {
  /** Stack name from the manifest. */
  readonly name: string;
  /** Path of its `cdk.tf.json`. */
  readonly file: string;
  /** `resource.<type>.<id>` of the stack. */
  readonly resources: Readonly<Record<string, Readonly<Record<string, ResourceBlock>>>>;
  /** cdktf's `//.metadata` of the stack (Terraform ignores it), `{}` when absent. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** The store namespace its vault provider works in (`settings.namespace`), `''` for the root namespace. */
  readonly namespace: string;
}

/**
 * Reads a cdktf output directory (`cdktf.out`): `manifest.json` names the stacks and where each
 * stack's `cdk.tf.json` is, a path confined to the output's `stacks/` folder ({@link confinedStackPath}).
 *
 * With `earlier` (another output this process read), a stack whose `cdk.tf.json` holds the same bytes
 * as the earlier stack of its name is not parsed again: it shares that stack's parsed `resources`
 * and `metadata` (read-only), so what is derived from them can be reused too ({@link sameDocument}).
 *
 * @returns the stacks sorted by name
 * @throws Error naming the directory or file when it is not a synthesized output
 */
export function readSynthOutput(dir: string, earlier?: readonly SynthStack[]): SynthStack[] {
  const before = new Map((earlier ?? []).map((s) => [s.name, s]));
  const manifestFile = path.join(dir, 'manifest.json');
  if (!fs.existsSync(manifestFile)) {
    throw new Error(`${dir} is not a synthesized output: it has no manifest.json (run \`npm run synth\` first)`);
  }
  const manifest = readJsonObject(manifestFile) as { stacks?: Record<string, { synthesizedStackPath?: string }> };
  if (!manifest.stacks || typeof manifest.stacks !== 'object' || Array.isArray(manifest.stacks)) {
    throw new Error(`${manifestFile}: no "stacks" object`);
  }
  return Object.entries(manifest.stacks)
    .map(([name, entry]) => {
      if (typeof entry?.synthesizedStackPath !== 'string') {
        throw new Error(`${manifestFile}: stack "${name}" has no synthesizedStackPath`);
      }
      const file = confinedStackPath(dir, entry.synthesizedStackPath, manifestFile, name, 'synthesizedStackPath');
      const bytes = readBytes(file);
      const previous = before.get(name);
      const previousBytes = previous === undefined ? undefined : documentBytes.get(previous);
      if (previous !== undefined && previousBytes !== undefined && previousBytes.equals(bytes)) {
        const same: SynthStack = { ...previous, file };
        documentBytes.set(same, previousBytes);
        return same;
      }
      const document = stackDocument(file, parseJson(file, bytes)) as {
        resource?: Record<string, Record<string, ResourceBlock>>;
        provider?: { vault?: { namespace?: unknown }[] };
        '//'?: { metadata?: unknown };
      };
      const namespace = providerNamespace(document);
      const metadata = document['//']?.metadata;
      const stack: SynthStack = {
        name,
        file,
        resources: document.resource ?? {},
        metadata: metadata && typeof metadata === 'object' && !Array.isArray(metadata) ? (metadata as Record<string, unknown>) : {},
        namespace,
      };
      documentBytes.set(stack, bytes);
      return stack;
    })
    .sort((a, b) => compareStrings(a.name, b.name));
}

/** The namespace of a stack document's vault provider block, `''` when none (the root namespace). */
function providerNamespace(document: { provider?: { vault?: { namespace?: unknown }[] } }): string {
  const namespace = document.provider?.vault?.[0]?.namespace;
  return typeof namespace === 'string' ? namespace : '';
}

/**
 * The namespace one synthesized stack (`cdk.tf.json`) works in, `''` for the root namespace.
 * @throws Error naming the file when it cannot be read
 */
export function readStackNamespace(file: string): string {
  return providerNamespace(stackDocument(file, readJson(file)) as { provider?: { vault?: { namespace?: unknown }[] } });
}

/** The bytes each stack {@link readSynthOutput} returned was parsed from: what a later read compares with. */
const documentBytes = new WeakMap<SynthStack, Buffer>();

/**
 * True when two stacks read by {@link readSynthOutput} are the same document: the same name, and
 * one was read as holding the other's bytes (so it shares the other's parsed `resources`).
 */
export function sameDocument(a: SynthStack, b: SynthStack): boolean {
  return a.name === b.name && a.resources === b.resources && a.metadata === b.metadata && a.namespace === b.namespace;
}

function readBytes(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new Error(`cannot read ${file}: ${fileErrorText(e)}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** What `typeof` would call a JSON value, for a message: `null`, an array, a number. */
function jsonKind(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** The JSON object a file holds. @throws Error naming the file when it holds none */
function readJsonObject(file: string): Record<string, unknown> {
  const value = parseJson(file, readBytes(file));
  if (!isObject(value)) throw new Error(`${file} holds ${jsonKind(value)}, not the JSON object cdktf writes: synthesize again (\`npm run synth\`)`);
  return value;
}

/**
 * A stack document checked to have the shape the readers rely on: an object whose `resource` (when
 * present) maps each type to an object of blocks, and whose `provider` and `//` are objects.
 * @throws Error naming the file and the part that is not
 */
function stackDocument(file: string, value: unknown): Record<string, unknown> {
  const again = 'synthesize again (`npm run synth`)';
  if (!isObject(value)) throw new Error(`${file} holds ${jsonKind(value)}, not the JSON object of a synthesized stack: ${again}`);
  for (const key of ['resource', 'provider', '//'] as const) {
    if (value[key] !== undefined && !isObject(value[key])) throw new Error(`${file}: "${key}" is ${jsonKind(value[key])}, not an object: ${again}`);
  }
  for (const [type, blocks] of Object.entries((value.resource ?? {}) as Record<string, unknown>)) {
    if (!isObject(blocks)) throw new Error(`${file}: resource "${type}" is ${jsonKind(blocks)}, not an object of resources: ${again}`);
    for (const [id, block] of Object.entries(blocks)) {
      if (!isObject(block)) throw new Error(`${file}: resource "${type}.${id}" is ${jsonKind(block)}, not an object: ${again}`);
    }
  }
  return value;
}

function readJson(file: string): unknown {
  return parseJson(file, readBytes(file));
}

function parseJson(file: string, bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not valid JSON: ${(e as Error).message}`);
  }
}

/**
 * Key under a synthesized stack's `//.metadata` that records the KV mounts its policies rely on:
 * `{"secret": {"version": 2}}`. The stacks never create a KV mount (it exists on the store), so
 * this record is how `tf`, `drift` and `adopt` know which mount and version to compare with the
 * live store. Terraform ignores `//` keys. Defined here, beside the reader of synthesized output,
 * so that the CLI never loads cdktf to read it.
 */
export const DECLARED_KV_MOUNTS_METADATA_KEY = 'secretstore-iac-kv-mounts';

/**
 * Key under a synthesized stack's `//.metadata` that records the store it targets, when
 * `settings.store` gives it: `{"kind": "vault", "version": "1.21.1"}`. The offline analyses read it
 * (lib/access/store-configuration.ts) so as to apply that store's capabilities, `default` policy and
 * LIST semantics. Defined here, beside the reader of synthesized output, so that the CLI never loads
 * cdktf to read it.
 */
export const STORE_TARGET_METADATA_KEY = 'secretstore-iac-store';

/**
 * Key under a synthesized stack's `//.metadata` that records, per people identity (`oidc/ops`), the
 * policy rules granted with a `machinePathReason`: the reason, and the CI and application paths the
 * rule reaches (`{"oidc/ops": {"secret/data/registry/svc-x": {"reason": "...", "reaches": [...]}}}`).
 * `access-diff` shows both on its "people gain a path" flag. Written only when a reason is given;
 * never a secret (reasons are the configuration's own words). Defined here, beside the reader of
 * synthesized output, so that the CLI never loads cdktf to read it.
 */
export const MACHINE_PATHS_METADATA_KEY = 'secretstore-iac-machine-paths';
