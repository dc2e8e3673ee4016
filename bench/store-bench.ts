/**
 * Store benchmark (not a test): prints figures and their ratio to the stated targets, asserts
 * nothing. On a real local OpenBao dev store (or HashiCorp Vault's, `--store vault`) with the
 * toolchain's OpenTofu and provider, for each size (default 1,000 and 5,000 generated applications;
 * about 50 applications a hash shard, at most 100 shards), the scenarios, one per file:
 *
 * - `layouts` (layout-scenario.ts): the applications' stacks alone, one `app-roles` stack against
 *   hash shards (issue 16);
 * - `pipeline`: the spec's platform with the configuration pipeline's roles in `ci-access`, on one
 *   dev store (store-workspace.ts), in order: the store's raw write rate (raw-write-scenario.ts, on a
 *   store of its own), apply from empty (apply-from-empty-scenario.ts), the no-change plan of
 *   `ci-access` (ci-access-plan-scenario.ts), then one application added, changed and removed, each
 *   through the pipeline's critical path (add-application-scenario.ts, change-application-scenario.ts,
 *   remove-application-scenario.ts; the steps: pipeline-path.ts);
 * - `--gitlab-ci-local` (only when asked: it takes many minutes): a cold pipeline under gitlab-ci-local,
 *   merge request and default branch, adding one application (gitlab-ci-local-scenario.ts); alone,
 *   it runs without the other scenarios unless `--scenarios` names them. It prints each pipeline's
 *   critical path job by job and each job's steps (gitlab-ci-local's `--timestamps`:
 *   pipeline-job-steps.ts); `--load [N]` adds a second round, one more application, beside
 *   `stress --cpu N` (default: the machine's cores), printed apart from the first.
 *
 * Run: `npm run bench:store` (builds first); `npm run bench:store -- --apps 100` for one size (or
 * SECRETSTORE_IAC_BENCH_APPS=100), `--scenarios pipeline` or `--scenarios layouts` for one kind,
 * `--touched-stacks-only` to skip the raw rate and apply from empty and apply only the stacks the
 * add, change and remove scenarios touch (a quick run at 5,000), `--shards 20` to fix the shard count, `--layouts sharded` for one layout, `--store vault` for a
 * HashiCorp Vault dev store (built by `SECRETSTORE_IAC_STORES=vault bash scripts/toolchain.sh`).
 */
import { spawnSync } from 'child_process';
import * as os from 'os';
import { toolchain } from '../demo/local-dev-store';
import { hashShard, shardLabel } from '../lib/model/application-sharding';
import { ADD_ONE_TARGET_S, addOne, measureAddApplication } from './add-application-scenario';
import { applyOnly, measureApplyFromEmpty } from './apply-from-empty-scenario';
import { benchRoleName } from './bench-platform';
import { changeOne, measureChangeApplication } from './change-application-scenario';
import { CiAccessPlanFigures, measureCiAccessPlan } from './ci-access-plan-scenario';
import { measureColdPipeline } from './gitlab-ci-local-scenario';
import { Layout, LayoutFigures, measureLayout, RESHARDED } from './layout-scenario';
import { PipelinePathFigures } from './pipeline-path';
import { ENGINE_PARALLELISM, measureRawWrites } from './raw-write-scenario';
import { measureRemoveApplication, removeOne } from './remove-application-scenario';
import { GeneratedApplication, StoreWorkspace } from './store-workspace';

/** Applications per hash shard when `--shards` is not given. */
const APPS_PER_SHARD = 50;
/** Target: apply from empty of the application stacks within this factor of the store's write-and-read-back rate. */
const APPLY_FROM_EMPTY_TARGET = 1.3;

type Scenario = 'layouts' | 'pipeline';

interface Options {
  readonly store: 'openbao' | 'vault';
  readonly sizes: number[];
  readonly shards?: number;
  readonly layouts: Layout[];
  readonly scenarios: Scenario[];
  readonly gitlabCiLocal: boolean;
  readonly touchedOnly: boolean;
  /** `--load [N]`: the cold pipeline's second round beside `stress --cpu N` (default: the machine's cores). */
  readonly load?: number;
}

function options(argv: readonly string[]): Options {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const sizes = (value('--apps') ?? process.env.SECRETSTORE_IAC_BENCH_APPS ?? '1000,5000').split(',').map(Number);
  const shards = value('--shards') === undefined ? undefined : Number(value('--shards'));
  const layouts = (value('--layouts') ?? 'single,sharded').split(',') as Layout[];
  const gitlabCiLocal = argv.includes('--gitlab-ci-local');
  // `--gitlab-ci-local` alone runs only the cold pipeline; with `--scenarios`, those too.
  const scenarios = (value('--scenarios') ?? (gitlabCiLocal ? '' : 'layouts,pipeline')).split(',').filter(Boolean) as Scenario[];
  const store = (value('--store') ?? 'openbao') as Options['store'];
  const loadGiven = argv.indexOf('--load');
  const load = loadGiven < 0 ? undefined : /^\d+$/.test(argv[loadGiven + 1] ?? '') ? Number(argv[loadGiven + 1]) : os.cpus().length;
  if (
    (store !== 'openbao' && store !== 'vault') ||
    sizes.some((n) => !Number.isInteger(n) || n < RESHARDED) ||
    layouts.some((l) => l !== 'single' && l !== 'sharded') ||
    scenarios.some((s) => s !== 'layouts' && s !== 'pipeline') ||
    (shards !== undefined && !(shards >= 1 && shards <= 100)) ||
    (load !== undefined && (load < 1 || !gitlabCiLocal))
  ) {
    throw new Error('usage: store-bench [--store openbao|vault] [--apps N[,N...]] (N >= 10) [--shards 1..100] [--layouts single,sharded] [--scenarios layouts,pipeline] [--touched-stacks-only] [--gitlab-ci-local [--load [N]]]');
  }
  return { store, sizes, shards, layouts, scenarios, gitlabCiLocal, touchedOnly: argv.includes('--touched-stacks-only'), load };
}

function row(label: string, values: readonly string[], width = 44): string {
  return `${label.padEnd(width)}${values.map((v) => v.padStart(14)).join('')}`;
}

const s = (v: number | undefined) => (v === undefined ? '-' : `${v.toFixed(v < 10 ? 2 : 1)} s`);
const x = (v: number) => `${v.toFixed(2)}x`;

function printLayouts(size: number, shards: number, layouts: readonly Layout[], results: Map<Layout, LayoutFigures>): void {
  const cols = layouts.map((l) => (l === 'single' ? 'single stack' : `${shards} shards`));
  const get = <K extends keyof LayoutFigures>(k: K) => layouts.map((l) => results.get(l)![k]);
  console.log('');
  console.log(row(`${size} applications`, cols));
  console.log(row('stacks', get('stacks').map(String)));
  console.log(row('init, every stack', get('initS').map((v) => s(v as number))));
  console.log(row('apply from empty', get('applyS').map((v) => s(v as number))));
  console.log(row('no-change plan, every stack', get('noChangePlanAllS').map((v) => s(v as number))));
  console.log(row('no-change plan, slowest stack', get('noChangePlanMaxStackS').map((v) => s(v as number))));
  console.log(row('one app changed: re-synthesis', get('changeSynthS').map((v) => s(v as number))));
  console.log(row('  changed-stacks (digests)', get('changeSelectS').map((v) => s(v as number))));
  console.log(row('  stacks selected', get('changeStacks').map(String)));
  console.log(row('  plan of the selected stacks', get('changePlanS').map((v) => s(v as number))));
  console.log(row('  apply of the saved plans', get('changeApplyS').map((v) => s(v as number))));
  console.log(row(`re-shard ${RESHARDED} apps: stacks selected`, get('reshardStacks').map((v) => (v === undefined ? '-' : String(v)))));
  console.log(row('  plan of the selected stacks', get('reshardPlanS').map((v) => s(v as number | undefined))));
  console.log(row('  apply of the saved plans', get('reshardApplyS').map((v) => s(v as number | undefined))));
  for (const layout of layouts) {
    const actions = results.get(layout)!.reshardActions;
    if (actions) console.log(`  re-shard plan actions (${layout}): ${actions}`);
  }
  console.log(row('peak memory, engine + provider', get('peakRssMb').map((v) => `${(v as number).toFixed(0)} MB`)));
}

/** The pipeline scenarios at one size; prints as it goes (a long run shows what it has). */
async function pipelineScenarios(size: number, shards: number, storeBinary: string, tools: Record<string, string>, touchedOnly: boolean): Promise<CiAccessPlanFigures> {
  console.log('');
  console.log(`${size} applications in ${shards} hash shards, with the configuration pipeline's roles (ci-access); load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  if (touchedOnly) {
    const ws = await StoreWorkspace.open(size, shards, storeBinary, tools);
    try {
      const touched = touchedShards(size, shards);
      await applyOnly(ws, touched);
      console.log(`--touched-stacks-only: no raw rate, no apply from empty; applied ci-access, app-roles and ${touched.join(', ')} only`);
      return await afterApply(ws);
    } finally {
      ws.close();
    }
  }
  const raw = await measureRawWrites(size, storeBinary);
  console.log(row(`store's raw rate: ${size} roles + ${size} policies over HTTP, ${ENGINE_PARALLELISM} at a time`, [], 0));
  console.log(row('  writes only', [s(raw.writeS)]));
  console.log(row('  each write read back, as the provider does', [s(raw.writeReadS), `  CPU: store ${s(raw.writeReadStoreCpuS)}, client ${s(raw.writeReadClientCpuS)}`]));
  const ws = await StoreWorkspace.open(size, shards, storeBinary, tools);
  try {
    const empty = await measureApplyFromEmpty(ws);
    console.log(row(`apply from empty (root token, engine alone; ${empty.stacks} stacks)`, [], 0));
    console.log(row('  synthesis (node process)', [s(empty.synthS)]));
    console.log(row('  init, every stack (one at a time)', [s(empty.initS)]));
    console.log(row('  ci-access', [s(empty.ciAccessS)]));
    const ratio = empty.applicationStacksS / raw.writeReadS;
    console.log(row(`  app-roles, then ${shards} shards ${empty.parallel} at a time`, [s(empty.applicationStacksS), `  ${x(ratio)} the raw write+read time (target <= ${x(APPLY_FROM_EMPTY_TARGET)})`]));
    console.log(row('  the same against raw writes only', ['', `  ${x(empty.applicationStacksS / raw.writeS)}`]));
    // Where the difference goes: the engine's own CPU (OpenTofu and its provider plugins) against the
    // store's; on this machine's cores the engine's CPU alone bounds the wall time from below.
    const cores = os.cpus().length;
    console.log(row('  CPU: engine + provider, store', [s(empty.engineCpuS), `  ${s(empty.storeCpuS)}; (engine + store) / ${cores} cores = ${s((empty.engineCpuS + empty.storeCpuS) / cores)}, ${x((empty.engineCpuS + empty.storeCpuS) / cores / raw.writeReadS)} the raw write+read time`]));
    return await afterApply(ws);
  } finally {
    ws.close();
  }
}

/** The shard stacks the add, change and remove scenarios touch, one after the other, at `size` applications. */
function touchedShards(size: number, shards: number): string[] {
  const applications: GeneratedApplication[] = Array.from({ length: size }, (_, index) => ({ index, tokenTtlHours: 12 }));
  const touched = new Set<number>();
  for (const change of [() => addOne(applications, size), () => changeOne(applications), () => removeOne(applications)]) {
    const before = new Map(applications.map((a) => [a.index, a.tokenTtlHours]));
    change();
    const after = new Map(applications.map((a) => [a.index, a.tokenTtlHours]));
    for (const i of new Set([...before.keys(), ...after.keys()])) if (before.get(i) !== after.get(i)) touched.add(i);
  }
  return [...new Set([...touched].map((i) => `app-roles-${shardLabel(hashShard(benchRoleName(i), shards))}`))].sort();
}

/** The scenarios on an applied store: the ci-access plan, then one application added, changed, removed. */
async function afterApply(ws: StoreWorkspace): Promise<CiAccessPlanFigures> {
  const ci = await measureCiAccessPlan(ws);
  console.log(row(`ci-access: synthesized JSON ${(ci.bytes / 1e6).toFixed(2)} MB; no-change plan (apply role)`, [s(ci.planS), `  CPU ${s(ci.planCpuS)}`], 0));
  const figures: [string, PipelinePathFigures][] = [];
  for (const [label, measure] of [
    ['add one', measureAddApplication],
    ['change one', measureChangeApplication],
    ['remove one', measureRemoveApplication],
  ] as const) {
    figures.push([label, await measure(ws)]);
  }
  const get = (f: (p: PipelinePathFigures) => string) => figures.map(([, p]) => f(p));
  console.log(row('the pipeline\'s critical path (steps summed)', figures.map(([l]) => l)));
  console.log(row('  stacks selected', get((p) => String(p.selected.length))));
  for (const [label, p] of figures) console.log(`    ${label}: ${p.selected.join(', ')}; planned ${p.planned}`);
  console.log(row('  synthesis (node process)', get((p) => s(p.synthS))));
  console.log(row('  moves BASE HEAD (directories)', get((p) => s(p.movesS))));
  console.log(row('  changed-stacks BASE HEAD (directories)', get((p) => s(p.selectS))));
  console.log(row('  init of the selected stacks', get((p) => s(p.initS))));
  console.log(row('  MR: access-diff BASE HEAD (directories)', get((p) => s(p.accessDiffS))));
  console.log(row('  MR: plans, plan role, 2 at a time', get((p) => s(p.mrPlanS))));
  console.log(row('  MR: slowest plan', get((p) => `${s(p.mrSlowest.s)}`)));
  console.log(row('  merge: plans, apply role, 2 at a time', get((p) => s(p.mergePlanS))));
  console.log(row('  merge: apply of ci-access (first)', get((p) => s(p.ciAccessApplyS))));
  console.log(row('  merge: every apply', get((p) => s(p.applyS))));
  console.log(row('  merge: refused to the apply role (403)', get((p) => (p.refused.length === 0 ? 'none' : String(p.refused.length)))));
  for (const [label, p] of figures) {
    if (p.refused.length > 0) console.log(`    ${label}: ${p.refused.join(', ')} refused (permission denied); planned and applied again with the root token in ${s(p.rootRetryS)}, counted below`);
  }
  console.log(row('  from MR to note', get((p) => s(p.mrToNoteS))));
  console.log(row('  from merge to applied', get((p) => s(p.mergeToAppliedS))));
  const add = figures[0][1];
  console.log(row(`  add one against the ${ADD_ONE_TARGET_S} s target`, [`MR ${x(add.mrToNoteS / ADD_ONE_TARGET_S)}`, `merge ${x(add.mergeToAppliedS / ADD_ONE_TARGET_S)}`]));
  console.log(row('peak memory, CLI + engine + provider', [`${ws.peakRssMb.toFixed(0)} MB`]));
  return ci;
}

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  const tools = toolchain();
  const version = /OpenTofu v\S+/.exec(spawnSync(tools.SECRETSTORE_IAC_TOFU, ['version'], { encoding: 'utf8', env: { ...process.env, ...tools } }).stdout)?.[0] ?? 'OpenTofu (version unknown)';
  const storeBinary = opts.store === 'vault' ? tools.SECRETSTORE_IAC_VAULT : tools.SECRETSTORE_IAC_BAO;
  if (!storeBinary) throw new Error(`no ${opts.store} in the toolchain: run SECRETSTORE_IAC_STORES=${opts.store} bash scripts/toolchain.sh`);
  console.log(`secretstore-iac store benchmark: ${version}, ${opts.store === 'vault' ? 'HashiCorp Vault' : 'OpenBao'} dev store on 127.0.0.1, ${os.cpus().length} cpus, node ${process.version}`);
  console.log('(seconds of wall time; the engine runs the mount stack first, then shards two at a time)');
  const ciAccess = new Map<number, CiAccessPlanFigures>();
  for (const size of opts.sizes) {
    const shards = opts.shards ?? Math.min(100, Math.max(1, Math.ceil(size / APPS_PER_SHARD)));
    if (opts.scenarios.includes('layouts')) {
      const results = new Map<Layout, LayoutFigures>();
      for (const layout of opts.layouts) results.set(layout, await measureLayout(size, layout, shards, storeBinary, tools));
      printLayouts(size, shards, opts.layouts, results);
    }
    if (opts.scenarios.includes('pipeline')) ciAccess.set(size, await pipelineScenarios(size, shards, storeBinary, tools, opts.touchedOnly));
    if (opts.gitlabCiLocal) await measureColdPipeline(size, shards, storeBinary, tools, opts.load);
  }
  if (ciAccess.size > 1) {
    const [small, large] = [Math.min(...ciAccess.keys()), Math.max(...ciAccess.keys())];
    const [a, b] = [ciAccess.get(small)!, ciAccess.get(large)!];
    console.log('');
    console.log(`ci-access no-change plan at ${large} against ${small} applications: ${x(b.planS / a.planS)} the time, ${x(b.planCpuS / a.planCpuS)} the CPU, ${x(b.bytes / a.bytes)} the JSON (target: flat, 1.00x)`);
  }
  console.log('');
  if (opts.scenarios.includes('layouts')) {
    console.log('targets (issue 16): one changed application plans in < 3 s and applies in < 5 s at 1,000 and 5,000 applications;');
    console.log('apply from empty of 1,000 applications < 60 s; a re-shard plans only imports and forgets.');
  }
  if (opts.scenarios.includes('pipeline')) {
    console.log(`targets (issue 30), at 5,000 applications: one application added in < ${ADD_ONE_TARGET_S} s from MR to note and from merge to applied;`);
    console.log(`ci-access plan time flat in N; apply from empty within ${APPLY_FROM_EMPTY_TARGET}x of the store's write-and-read-back rate.`);
  }
}

main().catch((error: Error) => {
  console.error(`store-bench: ${error.message}`);
  process.exit(1);
});
