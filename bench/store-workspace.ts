/**
 * The shared setup of the store benchmark's pipeline scenarios: one throw-away dev store, a work
 * directory with the synthesized output (`cdktf.out`, local state beside each stack), the CI key the
 * store's JWT method trusts (so the scenarios log in as the configuration pipeline's plan and apply
 * roles with signed job tokens, as the pipeline's jobs do), and timed runs of the synthesis, of the
 * CLI and of `secretstore-iac tf` (engine + provider memory sampled).
 */
import { spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { LocalDevStore, startLocalDevStore } from '../demo/local-dev-store';
import { mapLimited } from '../lib/private/map-limited';
import { BENCH_SETTINGS, BenchPlatformSpec } from './bench-platform';
import { EngineRun, runEngine } from './engine-run';

const ROOT = path.resolve(__dirname, '..', '..');
/** The built CLI, as the pipeline's jobs run it (`$SECRETSTORE_IAC_BIN`). */
export const CLI = path.join(ROOT, 'dist', 'bin', 'secretstore-iac.js');
const SYNTH_ENTRY = path.join(__dirname, 'bench-platform.js');
/** The configuration project's id in the benchmark (the pipeline roles' bound `project_id`). */
export const PROJECT_ID = '4242';
/** Stacks the engine runs at once where the pipeline runs parallel jobs (the machine's two cores). */
export const PARALLEL_STACKS = 2;
/** The pipeline roles' stack: applied before the others. */
export const CI_ACCESS = 'ci-access';

/** Seconds of wall time of `fn`. */
export async function seconds(fn: () => unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** The engine's subcommand, then no prompts and no colours, then the rest (a plan file last). */
function withEngineFlags(args: readonly string[]): string[] {
  return [args[0], '-input=false', '-no-color', ...args.slice(1)];
}

/** One generated application: what a scenario changes between syntheses. */
export interface GeneratedApplication {
  readonly index: number;
  tokenTtlHours: number;
}

/** Which pipeline role a step runs with, or the store's root token (the bootstrap, the raw writes). */
export type Identity = 'plan' | 'apply' | 'root';

export class StoreWorkspace {
  /** Peak resident memory of any engine run (engine + provider, or CLI + engine + provider), MB. */
  peakRssMb = 0;
  readonly outdir: string;
  readonly applications: GeneratedApplication[];
  private readonly tokens = new Map<Identity, string>();

  private constructor(
    readonly size: number,
    readonly shards: number,
    readonly work: string,
    readonly store: LocalDevStore,
    private readonly keys: crypto.KeyPairKeyObjectResult,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.outdir = path.join(work, 'cdktf.out');
    this.applications = Array.from({ length: size }, (_, index) => ({ index, tokenTtlHours: 12 }));
    this.tokens.set('root', store.rootToken);
  }

  /** A work directory (mode 0700) with a fresh dev store of `storeBinary` (raft storage in the work directory). */
  static async open(size: number, shards: number, storeBinary: string, tools: Record<string, string>): Promise<StoreWorkspace> {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-store-bench-pipeline-'));
    fs.chmodSync(work, 0o700);
    // Raft, not the dev server's memory storage: that copies the whole store at every AppRole read.
    const store = await startLocalDevStore(work, storeBinary, 'raft');
    const pluginCache = path.join(work, 'plugin-cache');
    fs.mkdirSync(pluginCache);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: work,
      SECRETSTORE_ADDR: store.addr,
      TF_IN_AUTOMATION: '1',
      TF_PLUGIN_CACHE_DIR: pluginCache,
      ...tools,
    };
    return new StoreWorkspace(size, shards, work, store, crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }), env);
  }

  close(): void {
    this.store.stop();
    fs.rmSync(this.work, { recursive: true, force: true });
  }

  /** Synthesizes the platform with the applications as they are now, in a node process of its own (the synth job's `npm run synth`). */
  async synth(outdir = this.outdir): Promise<number> {
    const spec: BenchPlatformSpec = {
      outdir,
      ciPublicKeyPem: this.ciPublicKeyPem,
      projectId: PROJECT_ID,
      shards: this.shards,
      applications: this.applications,
    };
    const file = path.join(this.work, 'bench-platform.json');
    fs.writeFileSync(file, JSON.stringify(spec));
    return seconds(() => {
      const r = spawnSync(process.execPath, [SYNTH_ENTRY, file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      if (r.status !== 0) throw new Error(`synthesis failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
    });
  }

  /** The stacks of the output, dependencies first (cdktf's manifest.json; ties by name). */
  stacks(): string[] {
    const manifest = JSON.parse(fs.readFileSync(path.join(this.outdir, 'manifest.json'), 'utf8')) as { stacks: Record<string, { dependencies?: string[] }> };
    const done: string[] = [];
    const visit = (s: string) => {
      if (done.includes(s)) return;
      for (const d of manifest.stacks[s]?.dependencies ?? []) visit(d);
      done.push(s);
    };
    Object.keys(manifest.stacks).sort().forEach(visit);
    return done;
  }

  /** Size of a stack's synthesized JSON, in bytes. */
  stackBytes(stack: string): number {
    return fs.statSync(path.join(this.outdir, 'stacks', stack, 'cdk.tf.json')).size;
  }

  /** A copy of the output without the engine's working files: the base (target branch, or the commit before the push). */
  snapshot(name: string): string {
    const to = path.join(this.work, name);
    fs.rmSync(to, { recursive: true, force: true });
    fs.cpSync(this.outdir, to, { recursive: true, filter: (src) => path.basename(src) !== '.terraform' && !src.endsWith('.tfplan') && !/\.tfstate(\.backup)?$/.test(src) });
    return to;
  }

  /** The public half of the CI key the store's JWT method trusts (PEM). */
  get ciPublicKeyPem(): string {
    return this.keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  }

  /** A job token of the configuration project signed with the CI key: a default-branch job's (`apply`) or a merge request's (`plan`). */
  jobToken(who: 'plan' | 'apply'): string {
    const now = Math.floor(Date.now() / 1000);
    const ref = who === 'apply' ? { ref: 'main', ref_protected: 'true', ref_path: 'refs/heads/main' } : { ref: 'feature', ref_protected: 'false', ref_path: 'refs/heads/feature' };
    const claims = {
      iss: BENCH_SETTINGS.ciUrl,
      aud: BENCH_SETTINGS.ciUrl,
      sub: `project_path:acme/secretstore-config:ref_type:branch:ref:${ref.ref}`,
      iat: now,
      nbf: now - 5,
      exp: now + 3 * 3600,
      project_id: PROJECT_ID,
      project_path: 'acme/secretstore-config',
      namespace_path: 'acme',
      ref_type: 'branch',
      ...ref,
    };
    const b64url = (s: string | Buffer) => Buffer.from(s).toString('base64url');
    const unsigned = `${b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
    return `${unsigned}.${b64url(crypto.sign('sha256', Buffer.from(unsigned), this.keys.privateKey))}`;
  }

  /** A store token of `who`: a pipeline role's from a signed job token, as the pipeline's login does. */
  async token(who: Identity): Promise<string> {
    const known = this.tokens.get(who);
    if (known) return known;
    const id = who === 'apply' ? 'apply' : 'plan';
    const role = id === 'apply' ? 'secretstore-iac-pipeline' : 'secretstore-iac-plan';
    const r = await fetch(`${this.store.addr}/v1/auth/jwt/login`, { method: 'POST', body: JSON.stringify({ role, jwt: this.jobToken(id) }) });
    if (r.status !== 200) throw new Error(`login as ${role}: HTTP ${r.status}`);
    const token = ((await r.json()) as { auth: { client_token: string } }).auth.client_token;
    this.tokens.set(who, token);
    return token;
  }

  /** Runs the CLI (`moves`, `changed-stacks`, `access-diff`) with `who`'s token; its stdout holds no secret. */
  async cli(args: readonly string[], who: Identity = 'root', okCodes: readonly number[] = [0]): Promise<{ s: number; stdout: string }> {
    const env = { ...this.env, VAULT_TOKEN: await this.token(who) };
    let r: ReturnType<typeof spawnSync> | undefined;
    const s = await seconds(() => (r = spawnSync(process.execPath, [CLI, ...args], { cwd: this.work, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })));
    if (!okCodes.includes(r!.status ?? -1)) throw new Error(`secretstore-iac ${args[0]} failed (exit ${r!.status}):\n${r!.stdout}${r!.stderr}`);
    return { s, stdout: String(r!.stdout) };
  }

  /** `secretstore-iac tf STACK [flags] -- args` with `who`'s token, as a pipeline job runs it. */
  async tf(stack: string, flags: readonly string[], args: readonly string[], who: Identity): Promise<EngineRun> {
    const env = { ...this.env, VAULT_TOKEN: await this.token(who) };
    const run = await runEngine(process.execPath, [CLI, 'tf', stack, '--outdir', this.outdir, ...flags, '--', ...withEngineFlags(args)], this.work, env);
    this.peakRssMb = Math.max(this.peakRssMb, run.peakRssMb);
    return run;
  }

  /** The engine itself (no CLI around it) in a stack's directory, with `who`'s token. */
  async engine(stack: string, args: readonly string[], who: Identity): Promise<EngineRun> {
    const env = { ...this.env, VAULT_ADDR: this.store.addr, VAULT_TOKEN: await this.token(who) };
    const run = await runEngine(this.env.SECRETSTORE_IAC_TOFU!, withEngineFlags(args), path.join(this.outdir, 'stacks', stack), env);
    this.peakRssMb = Math.max(this.peakRssMb, run.peakRssMb);
    return run;
  }

  /** A fresh `init` of each stack (its `.terraform` removed first, as in a new job), one at a time: they share a plugin cache, and concurrent installs into one cache race. */
  async init(stacks: readonly string[]): Promise<number> {
    return seconds(async () => {
      for (const s of stacks) {
        fs.rmSync(path.join(this.outdir, 'stacks', s, '.terraform'), { recursive: true, force: true });
        await this.engine(s, ['init'], 'root');
      }
    });
  }

  /** Runs `step` over the stacks, `PARALLEL_STACKS` at a time (parallel pipeline jobs); its wall time. */
  async parallel(stacks: readonly string[], step: (stack: string) => Promise<unknown>, limit = PARALLEL_STACKS): Promise<number> {
    return seconds(() => mapLimited(stacks, limit, step));
  }
}
