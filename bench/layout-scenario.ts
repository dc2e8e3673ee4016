/**
 * The layout comparison of the store benchmark (issue 16), side by side in the same run, each on a
 * dev store of its own:
 *
 * - `single`: every application in the `app-roles` stack;
 * - `sharded`: the AppRole mount in `app-roles`, applications hashed into shards.
 *
 * Figures: `init` of every stack (one at a time: they share a plugin cache); apply from empty (mount
 * stack first, then the shards two at a time, as the pipeline's parallel jobs would on two cores); a
 * no-change plan of every stack; one application's TTL changed: re-synthesis, `secretstore-iac
 * changed-stacks` and the plan of the changed stacks only, then their apply; a re-shard of 10
 * applications (each given its own `stack`): `secretstore-iac moves`, then plan and apply of the
 * changed stacks, with the plans' actions counted (only imports and forgets expected); the peak memory
 * of the engine and its provider. Only the applications' stacks are synthesized (no `ci-access`).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApplicationStacks, Duration, PlatformSettings, SecretStoreApp } from '../lib';
import { startLocalDevStore } from '../demo/local-dev-store';
import { mapLimited } from '../lib/private/map-limited';
import { EngineRun, runEngine } from './engine-run';
import { CLI, PARALLEL_STACKS } from './store-workspace';

const MOUNT_STACK = 'app-roles';
/** Applications given a stack of their own by the re-shard. */
export const RESHARDED = 10;

/** The two layouts compared. */
export type Layout = 'single' | 'sharded';

/** One generated application: what the benchmark changes between syntheses. */
interface GeneratedApplication {
  readonly index: number;
  tokenTtlHours: number;
  stack?: string;
}

/** Synthesizes the application stacks (no `ci-access`: the figures are about applications) into `outdir`. */
function synthesize(outdir: string, apps: readonly GeneratedApplication[], layout: Layout, shards: number): void {
  const app = new SecretStoreApp({ outdir });
  const settings = new PlatformSettings({ organisation: 'acme', ciUrl: 'https://gitlab.acme.example', registryHost: 'registry.acme.example' });
  const stacks = new ApplicationStacks(app, MOUNT_STACK, { settings, ...(layout === 'sharded' ? { sharding: { by: 'hash', shards } } : {}) });
  for (const a of apps) {
    stacks.addApplication(`bench-${a.index}`, {
      name: `bench${a.index}`,
      environment: 'prod',
      tokenTtl: Duration.hours(a.tokenTtlHours),
      ...(a.stack ? { stack: a.stack } : {}),
    });
  }
  app.synth();
}

/** The stacks of a synthesized output, dependencies first (cdktf's manifest.json). */
function stacksInOrder(outdir: string): string[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(outdir, 'manifest.json'), 'utf8')) as { stacks: Record<string, { dependencies?: string[] }> };
  const names = Object.keys(manifest.stacks).sort();
  return [...names.filter((n) => n === MOUNT_STACK), ...names.filter((n) => n !== MOUNT_STACK)];
}

/** A copy of a synthesized output without the engine's working files: the "target branch" to compare with. */
function snapshot(outdir: string, to: string): void {
  fs.rmSync(to, { recursive: true, force: true });
  fs.cpSync(outdir, to, { recursive: true, filter: (src) => path.basename(src) !== '.terraform' && !src.endsWith('.tfplan') });
}

/** Runs the CLI; its stdout (stack names) holds nothing secret. */
function cli(args: readonly string[], env: NodeJS.ProcessEnv, okCodes: readonly number[] = [0]): { ms: number; stdout: string } {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (!okCodes.includes(r.status ?? -1)) throw new Error(`secretstore-iac ${args[0]} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  return { ms, stdout: r.stdout };
}

/** The stacks `changed-stacks BASE HEAD` prints, dependencies first. */
function changedStacks(base: string, head: string, env: NodeJS.ProcessEnv): { ms: number; stacks: string[] } {
  const r = cli(['changed-stacks', base, head], env);
  return { ms: r.ms, stacks: r.stdout.split('\n').map((l) => l.trim()).filter(Boolean) };
}

/** Figures of one layout at one size. */
export interface LayoutFigures {
  stacks: number;
  initS: number;
  applyS: number;
  noChangePlanAllS: number;
  noChangePlanMaxStackS: number;
  changeStacks: number;
  changeSynthS: number;
  changeSelectS: number;
  changePlanS: number;
  changeApplyS: number;
  reshardStacks?: number;
  reshardPlanS?: number;
  reshardApplyS?: number;
  reshardActions?: string;
  peakRssMb: number;
}

class Measured {
  peakRssMb = 0;
  take(run: EngineRun): EngineRun {
    this.peakRssMb = Math.max(this.peakRssMb, run.peakRssMb);
    return run;
  }
}

/** The actions of a saved plan, counted (`tofu show -json`): imports, forgets, creates, updates, deletes. */
function planActions(engine: string, stackDir: string, planFile: string, env: NodeJS.ProcessEnv): Record<string, number> {
  const r = spawnSync(engine, ['show', '-json', planFile], { cwd: stackDir, env, encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`show -json failed in ${stackDir}: ${r.stderr}`);
  const plan = JSON.parse(r.stdout) as { resource_changes?: { change: { actions: string[]; importing?: unknown } }[]; resource_drift?: unknown[] };
  const counts: Record<string, number> = {};
  for (const rc of plan.resource_changes ?? []) {
    const actions = rc.change.actions.join('+');
    const kind = rc.change.importing && actions === 'no-op' ? 'import' : actions === 'forget' ? 'forget' : rc.change.importing ? `import+${actions}` : actions;
    if (kind !== 'no-op') counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return counts;
}

export async function measureLayout(size: number, layout: Layout, shards: number, storeBinary: string, tools: Record<string, string>): Promise<LayoutFigures> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `secretstore-store-bench-${layout}-`));
  fs.chmodSync(work, 0o700);
  const store = await startLocalDevStore(work, storeBinary);
  try {
    const engine = tools.SECRETSTORE_IAC_TOFU;
    const pluginCache = path.join(work, 'plugin-cache');
    fs.mkdirSync(pluginCache);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: work,
      VAULT_ADDR: store.addr,
      VAULT_TOKEN: store.rootToken,
      TF_IN_AUTOMATION: '1',
      TF_PLUGIN_CACHE_DIR: pluginCache,
      ...tools,
    };
    const outdir = path.join(work, 'cdktf.out');
    const base = path.join(work, 'base.out');
    const dir = (stack: string) => path.join(outdir, 'stacks', stack);
    const m = new Measured();
    const apps: GeneratedApplication[] = Array.from({ length: size }, (_, index) => ({ index, tokenTtlHours: 12 }));
    synthesize(outdir, apps, layout, shards);
    const stacks = stacksInOrder(outdir);
    const rest = stacks.filter((s) => s !== MOUNT_STACK);
    const timed = async (fn: () => Promise<unknown>) => {
      const start = process.hrtime.bigint();
      await fn();
      return Number(process.hrtime.bigint() - start) / 1e9;
    };
    // The mount stack first (the shards depend on it), then the shards as parallel jobs would run.
    const everyStack = async (args: (stack: string) => string[], parallel = PARALLEL_STACKS) => {
      const first = m.take(await runEngine(engine, args(MOUNT_STACK), dir(MOUNT_STACK), env));
      const others = await mapLimited(rest, parallel, async (s) => m.take(await runEngine(engine, args(s), dir(s), env)));
      return [first, ...others];
    };
    // One init at a time: concurrent installs into one plugin cache race (docs/pipelines.md gives
    // every pipeline job a cache of its own for the same reason).
    const initS = await timed(() => everyStack(() => ['init', '-input=false', '-no-color'], 1));
    const applyS = await timed(() => everyStack(() => ['apply', '-auto-approve', '-input=false', '-no-color']));
    let planMax = 0;
    const noChangePlanAllS = await timed(async () => {
      for (const run of await everyStack(() => ['plan', '-input=false', '-no-color', '-detailed-exitcode'])) planMax = Math.max(planMax, run.ms / 1000);
    });

    // One application changes: only its stack is planned and applied.
    snapshot(outdir, base);
    apps[size >> 1].tokenTtlHours = 6;
    const changeSynthS = await timed(async () => synthesize(outdir, apps, layout, shards));
    const changed = changedStacks(base, outdir, env);
    const plan = (file: string) => ['plan', '-input=false', '-no-color', `-out=${file}`];
    const changePlanS = await timed(async () => {
      for (const s of changed.stacks) m.take(await runEngine(engine, plan('change.tfplan'), dir(s), env));
    });
    const changeApplyS = await timed(async () => {
      for (const s of changed.stacks) m.take(await runEngine(engine, ['apply', '-input=false', '-no-color', 'change.tfplan'], dir(s), env));
    });
    const figures: LayoutFigures = {
      stacks: stacks.length,
      initS,
      applyS,
      noChangePlanAllS,
      noChangePlanMaxStackS: planMax,
      changeStacks: changed.stacks.length,
      changeSynthS,
      changeSelectS: changed.ms / 1000,
      changePlanS,
      changeApplyS,
      peakRssMb: 0,
    };

    if (layout === 'sharded') {
      // Ten applications get a stack of their own: moves, then only the changed stacks plan and apply.
      snapshot(outdir, base);
      for (let i = 0; i < RESHARDED; i++) apps[i * Math.floor(size / RESHARDED)].stack = 'moved';
      synthesize(outdir, apps, layout, shards);
      cli(['moves', base, outdir], env);
      const moved = changedStacks(base, outdir, env);
      for (const s of moved.stacks) if (!fs.existsSync(path.join(dir(s), '.terraform'))) m.take(await runEngine(engine, ['init', '-input=false', '-no-color'], dir(s), env));
      const actions: Record<string, number> = {};
      figures.reshardPlanS = await timed(async () => {
        for (const s of moved.stacks) {
          m.take(await runEngine(engine, plan('reshard.tfplan'), dir(s), env));
          for (const [k, n] of Object.entries(planActions(engine, dir(s), 'reshard.tfplan', env))) actions[k] = (actions[k] ?? 0) + n;
        }
      });
      figures.reshardApplyS = await timed(async () => {
        for (const s of moved.stacks) m.take(await runEngine(engine, ['apply', '-input=false', '-no-color', 'reshard.tfplan'], dir(s), env));
      });
      figures.reshardStacks = moved.stacks.length;
      figures.reshardActions = Object.entries(actions).sort().map(([k, n]) => `${n} ${k}`).join(', ') || 'none';
    }
    figures.peakRssMb = m.peakRssMb;
    return figures;
  } finally {
    store.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

