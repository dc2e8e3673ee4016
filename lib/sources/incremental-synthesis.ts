import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { IConstruct } from 'constructs';
import { TerraformStack } from '../framework/framework';
import { compareStrings } from '../private/compare-strings';
import { IncrementalSynthesisSummary } from './incremental-synthesis-summary';
import { stackRenderKey } from './stack-render-key';
import { SYNTH_CACHE_SECRET_VARIABLE, SYNTH_CACHE_VARIABLE, SynthesisCache, synthesisCacheDir, VerifiedEntry } from './synthesis-cache';

/**
 * The file of a synthesized output (beside `manifest.json`) that records each stack's render key
 * ({@link stackRenderKey}) and the SHA-256 of the `cdk.tf.json` it rendered to; written only by an
 * incremental synthesis, and read from a sealed synthesis cache entry by the next one.
 */
export const RENDER_KEYS_FILE = 'stack-render-keys.json';
/** Version of the {@link RENDER_KEYS_FILE} layout: a record of another layout is not read. */
const FORMAT = 1;

/** One stack of a {@link RENDER_KEYS_FILE}. */
interface RenderedStack {
  /** The render key of the stack. */
  readonly key: string;
  /** The stack's `cdk.tf.json`, relative to the output directory. */
  readonly file: string;
  /** SHA-256 (hex) of its bytes. */
  readonly sha256: string;
}

interface RenderKeysRecord {
  readonly format: number;
  /** The library that rendered (its version): a record of another library is never reused. */
  readonly library: string;
  readonly stacks: Record<string, RenderedStack>;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The incremental synthesis of each app, for its stacks ({@link IncrementalSynthesis.of}). */
const ofApp = new WeakMap<IConstruct, IncrementalSynthesis>();

/**
 * Incremental synthesis: a stack whose render key ({@link stackRenderKey}, salted with the library's
 * version) is the one an earlier synthesis recorded is not rendered again; its `cdk.tf.json` is
 * that synthesis's, taken from a synthesis cache entry whose seal and every file's digest verified
 * ({@link SynthesisCache.latest}), its bytes checked once more against the entry's sealed record
 * and the SHA-256 the record of render keys gives, when read. Whatever does not verify, a record of
 * another library or of another layout, a stack whose key cannot be computed: rendered, never reused.
 * Everything else of a synthesis (every construct declared, every validation and platform rule on
 * the whole configuration, the artifacts) is done as always; only the stacks' token resolution is
 * skipped. After writing, each reused stack's written bytes are compared with the earlier ones
 * ({@link verifyWritten}).
 */
export class IncrementalSynthesis {
  /**
   * The incremental synthesis the environment asks for: with {@link SYNTH_CACHE_VARIABLE} set (the
   * configuration pipeline's synth job), reusing from the most recently used entry of that cache
   * (sealed with {@link SYNTH_CACHE_SECRET_VARIABLE}); undefined without it.
   */
  static fromEnvironment(env: Readonly<Record<string, string | undefined>>, library: string): IncrementalSynthesis | undefined {
    const dir = env[SYNTH_CACHE_VARIABLE];
    if (dir === undefined || dir === '') return undefined;
    const cache = new SynthesisCache(synthesisCacheDir(dir, env), 16, env[SYNTH_CACHE_SECRET_VARIABLE] || undefined);
    const entry = cache.latest();
    // Without the secret an entry's seal is recomputable: nothing is reused, and the log says why.
    return new IncrementalSynthesis(library, entry, cache.verified ? undefined : `nothing reused: ${SYNTH_CACHE_SECRET_VARIABLE} is not set, so the synthesis cache's entries are unverified (a plain SHA-256 seal anyone who can write the cache can compute again)`);
  }

  /** The incremental synthesis attached to the app of `scope`, if any. */
  static of(scope: IConstruct): IncrementalSynthesis | undefined {
    return ofApp.get(scope.node.root);
  }

  private readonly previous?: RenderKeysRecord;
  private readonly why: string;
  private readonly keys = new Map<string, string | undefined>();
  private readonly reusedBytes = new Map<string, Buffer>();

  /**
   * @param library the library's version, part of every render key
   * @param entry the verified cache entry to reuse stacks from; none: every stack is rendered (and its key recorded)
   * @param none why there is no entry, for the log (default: the cache has none)
   */
  constructor(
    readonly library: string,
    private readonly entry?: VerifiedEntry,
    none: string = 'no synthesis in the synthesis cache',
  ) {
    const earlier = entry === undefined ? none : readRenderKeys(entry, library);
    this.previous = typeof earlier === 'string' ? undefined : earlier;
    this.why = typeof earlier === 'string' ? earlier : `the synthesis cache entry ${entry!.key.slice(0, 12)}`;
  }

  /** Attaches this incremental synthesis to `app` for its next synthesis (what an earlier one rendered and reused is forgotten); {@link detach} after. */
  attach(app: IConstruct): void {
    this.keys.clear();
    this.reusedBytes.clear();
    ofApp.set(app.node.root, this);
  }

  /** Ends {@link attach}. */
  detach(app: IConstruct): void {
    ofApp.delete(app.node.root);
  }

  /**
   * The Terraform JSON of `stack`: the earlier synthesis's when its render key is the recorded one
   * and its bytes verify, else `render()` (cdktf's `toTerraform`).
   */
  toTerraform(stack: TerraformStack, render: () => unknown): unknown {
    const name = stack.node.id;
    const key = stackRenderKey(stack, [`library ${this.library}`]);
    this.keys.set(name, key);
    const earlier = key === undefined || this.previous === undefined || !Object.hasOwn(this.previous.stacks, name) ? undefined : this.previous.stacks[name];
    if (earlier !== undefined && earlier.key === key && this.entry !== undefined && wellFormed(earlier) && this.entry.files[earlier.file] === earlier.sha256) {
      const bytes = readIfThere(path.join(this.entry.outdir, earlier.file));
      // Read once, checked as read: the bytes used are the bytes whose digest the seal covers.
      if (bytes !== undefined && sha256(bytes) === earlier.sha256) {
        this.reusedBytes.set(name, bytes);
        return JSON.parse(bytes.toString('utf8'));
      }
    }
    return render();
  }

  /**
   * After cdktf wrote `outdir`: checks that every reused stack was written with the earlier bytes
   * (cdktf's JSON writer reproduces them; if ever it did not, the synthesis fails rather than write
   * a stack the key did not vouch for), and returns the {@link RENDER_KEYS_FILE} content and the summary.
   * @throws Error naming the stack whose written bytes differ
   */
  verifyWritten(outdir: string): { record: string; summary: IncrementalSynthesisSummary } {
    const manifest = JSON.parse(fs.readFileSync(path.join(outdir, 'manifest.json'), 'utf8')) as { stacks: Record<string, { synthesizedStackPath: string }> };
    const stacks: Record<string, RenderedStack> = {};
    const rendered: string[] = [];
    for (const name of Object.keys(manifest.stacks).sort(compareStrings)) {
      const file = manifest.stacks[name].synthesizedStackPath;
      const bytes = fs.readFileSync(path.join(outdir, file));
      const earlier = this.reusedBytes.get(name);
      if (earlier !== undefined && !earlier.equals(bytes)) throw new Error(`incremental synthesis: the stack ${name} was written with bytes other than the synthesis it was reused from: synthesize without ${SYNTH_CACHE_VARIABLE}`);
      if (earlier === undefined) rendered.push(name);
      const key = this.keys.get(name);
      if (key !== undefined) stacks[name] = { key, file, sha256: sha256(bytes) };
    }
    const record: RenderKeysRecord = { format: FORMAT, library: this.library, stacks };
    return {
      record: `${JSON.stringify(record, null, 2)}\n`,
      summary: { rendered, reused: [...this.reusedBytes.keys()].sort(compareStrings), from: this.why },
    };
  }
}

/** A file's bytes, or undefined when it cannot be read (an entry pruned meanwhile): then the stack is rendered. */
function readIfThere(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

/** The render keys a verified cache entry records, or why none can be reused from it. */
function readRenderKeys(entry: VerifiedEntry, library: string): RenderKeysRecord | string {
  const name = `the cache entry ${entry.key.slice(0, 12)}`;
  const sealed = entry.files[RENDER_KEYS_FILE];
  if (sealed === undefined) return `${name} records no render keys`;
  const bytes = readIfThere(path.join(entry.outdir, RENDER_KEYS_FILE));
  if (bytes === undefined || sha256(bytes) !== sealed) return `the render keys of ${name} differ from its sealed record`;
  let record: RenderKeysRecord;
  try {
    record = JSON.parse(bytes.toString('utf8')) as RenderKeysRecord;
  } catch {
    return `the render keys of ${name} are not JSON`;
  }
  if (record?.format !== FORMAT || typeof record.stacks !== 'object' || record.stacks === null) return `${name} records render keys of another layout`;
  if (record.library !== library) return `${name} was synthesized by library ${String(record.library)}, this is ${library}: nothing reused`;
  return record;
}

/** A recorded stack whose fields are what they say: a path inside the entry's output directory (relative, no `..`) and a digest. */
function wellFormed(stack: RenderedStack): boolean {
  const { file, sha256: digest } = stack as unknown as Record<string, unknown>;
  return typeof file === 'string' && typeof digest === 'string' && /^[0-9a-f]{64}$/.test(digest) && !path.isAbsolute(file) && file.split('/').every((s) => s !== '' && s !== '..' && s !== '.');
}
