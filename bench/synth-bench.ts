/**
 * Synthesis benchmark (not a test): prints figures, asserts nothing.
 *
 * 1. Library overhead: the platform stacks synthesized through the library, next to the same
 *    resources written with the raw provider classes and literal values (target: at most 1.2x); the
 *    bench says whether both sides wrote the same resources and values (references aside).
 * 2. Scale: time and peak memory (max RSS of a fresh process) to synthesize 100, 1,000 and 5,000
 *    generated applications (target: 1,000 apps under 2 s and 400 MB, growing linearly).
 *
 * 3. Incremental synthesis (issue 39): at 5,000 and 20,000 generated applications in 100 hash
 *    shards (the store benchmark's layout), a full synthesis of the platform with one application
 *    added, next to the incremental synthesis of the same platform reusing the stacks of the one
 *    before it from a synthesis cache entry (lib/sources/incremental-synthesis.ts): time from node's
 *    start (module loading included, as the synth job's `node dist/stacks/main.js`) and peak memory,
 *    then the synth job's next step on the two outputs, `secretstore-iac moves` (its own process).
 *
 * Run: `npm run bench` (builds first); `node dist/bench/synth-bench.js --incremental` for the third
 * part only. Each scale point runs in its own node process so that its peak memory is its own.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, LocalBackend, TerraformOutput, TerraformStack } from 'cdktf';
import { ApproleAuthBackendRole } from '@cdktf/provider-vault/lib/approle-auth-backend-role';
import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { JwtAuthBackend } from '@cdktf/provider-vault/lib/jwt-auth-backend';
import { JwtAuthBackendRole } from '@cdktf/provider-vault/lib/jwt-auth-backend-role';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { VaultProvider } from '@cdktf/provider-vault/lib/provider';
import { IConstruct } from 'constructs';
import { AppRoleApplication, Duration, IArtifactSource, JwtKeySource, postgresState, SecretStoreApp } from '../lib';
import { IncrementalSynthesis } from '../lib/sources/incremental-synthesis';
import { SynthesisCache } from '../lib/sources/synthesis-cache';
import { BENCH_SETTINGS } from './bench-platform';
import { definePlatform } from '../lib/platform/platform';
import { platformConfig } from '../stacks/platform.config';

// Synthesis happens in the project (cdktf.out), so the benchmark writes below the working directory:
// on this machine /tmp creates files ~40x slower than the same disk elsewhere (3.9 s vs 0.1 s for
// 3,000 files), which would measure the sandbox rather than the library.
const BENCH_DIR = path.resolve('.bench-out');
const tmp = () => {
  fs.mkdirSync(BENCH_DIR, { recursive: true });
  return path.join(fs.mkdtempSync(path.join(BENCH_DIR, 'run-')), 'out');
};

/**
 * Measures the library's own work on the stacks: the same app without its artifact files, which it
 * then neither renders nor checks (the layout check renders them; "with CI template + agent files"
 * measures that).
 */
class StacksOnlyApp extends SecretStoreApp {
  protected writesArtifactsOf(_c: IConstruct): _c is IArtifactSource {
    return false;
  }
}

/** The platform through the library without its CI template and agent files. */
function synthLibraryStacksOnly(): string {
  const outdir = tmp();
  const app = new StacksOnlyApp({ outdir });
  definePlatform(app, platformConfig, postgresState());
  app.synth();
  return outdir;
}

/**
 * The platform through the library, plus `extraApps` generated applications.
 * @param withSecrets whether each generated application declares a secret (and so gets agent files)
 */
function synthLibrary(extraApps = 0, withSecrets = true): string {
  const outdir = tmp();
  const app = new SecretStoreApp({ outdir });
  const platform = definePlatform(app, platformConfig, postgresState());
  for (let i = 0; i < extraApps; i++) {
    new AppRoleApplication(platform.appRoles, `gen-${i}`, {
      auth: platform.appRoles.appRoleAuth,
      name: `gen-${i}`,
      environment: 'bench',
      secrets: withSecrets ? { config: ['api_key', 'endpoint'] } : {},
    });
  }
  app.synth();
  return outdir;
}

/** Policy texts by policy name: a hand-written stack holds them as literals. */
type PolicyTexts = Readonly<Record<string, string>>;

/**
 * The policy texts the library's stacks hold, read once before any timing: the raw stacks below
 * carry them as literal strings, so that both sides write the same resources with the same values.
 */
function libraryPolicyTexts(): PolicyTexts {
  const outdir = synthLibraryStacksOnly();
  const texts: Record<string, string> = {};
  for (const stack of ['ci-access', 'app-roles']) {
    const json = JSON.parse(fs.readFileSync(path.join(outdir, 'stacks', stack, 'cdk.tf.json'), 'utf8'));
    for (const policy of Object.values(json.resource.vault_policy) as { name: string; policy: string }[]) texts[policy.name] = policy.policy;
  }
  fs.rmSync(path.dirname(outdir), { recursive: true, force: true });
  return texts;
}

/** The JWT role settings every CI role of the platform shares. */
const JWT_ROLE_DEFAULTS = {
  roleType: 'jwt',
  userClaim: 'project_path',
  userClaimJsonPointer: false,
  boundAudiences: ['https://gitlab.acme.example'],
  boundSubject: '',
  claimMappings: {},
  groupsClaim: '',
  disableBoundClaimsParsing: false,
  clockSkewLeeway: 0,
  expirationLeeway: 0,
  notBeforeLeeway: 0,
  verboseOidcLogging: false,
  tokenNoDefaultPolicy: false,
  tokenTtl: 3600,
  tokenMaxTtl: 3600,
  tokenExplicitMaxTtl: 3600,
  tokenPeriod: 0,
  tokenNumUses: 0,
  tokenType: 'service',
  tokenBoundCidrs: [],
};

/**
 * The same resources as the library's platform stacks, with the raw provider classes and literal
 * values, as a hand-written stack would: the JWT method, registry-ci and the configuration
 * pipeline's two roles with their policies; the AppRole method and the four applications.
 */
function synthRaw(policies: PolicyTexts): string {
  const outdir = tmp();
  const app = new App({ outdir });
  const ci = new TerraformStack(app, 'ci-access');
  new VaultProvider(ci, 'vault', {});
  new LocalBackend(ci, { path: 'terraform.ci-access.tfstate' });
  const jwt = new JwtAuthBackend(ci, 'jwt', {
    path: 'jwt',
    type: 'jwt',
    description: 'CI job tokens (managed by secretstore-iac)',
    boundIssuer: 'https://gitlab.acme.example',
    oidcDiscoveryUrl: 'https://gitlab.acme.example',
  });
  for (const [role, boundClaims, boundClaimsType] of [
    ['registry-ci', { namespace_path: 'acme,acme/*' }, 'glob'],
    ['secretstore-iac-pipeline', { project_id: '42', ref_protected: 'true', ref_type: 'branch' }, 'string'],
    ['secretstore-iac-plan', { project_id: '42' }, 'string'],
  ] as const) {
    const policy = new Policy(ci, `${role}-policy`, { name: role, policy: policies[role] });
    new JwtAuthBackendRole(ci, role, { ...JWT_ROLE_DEFAULTS, backend: jwt.path, roleName: role, boundClaims, boundClaimsType, tokenPolicies: [policy.name] });
  }
  const apps = new TerraformStack(app, 'app-roles');
  new VaultProvider(apps, 'vault', {});
  new LocalBackend(apps, { path: 'terraform.app-roles.tfstate' });
  const approle = new AuthBackend(apps, 'approle', { type: 'approle', path: 'approle', description: 'Application sidecar agents (managed by secretstore-iac)' });
  for (const role of ['orchestrator-dev', 'authentik-role', 'gitlab-role', 'registry']) {
    const policy = new Policy(apps, `${role}-policy`, { name: role, policy: policies[role] });
    const r = new ApproleAuthBackendRole(apps, role, {
      backend: approle.path,
      roleName: role,
      bindSecretId: true,
      secretIdTtl: 0,
      secretIdNumUses: 0,
      secretIdBoundCidrs: [],
      tokenPolicies: [policy.name],
      tokenNoDefaultPolicy: false,
      tokenTtl: 43200,
      tokenMaxTtl: 86400,
      tokenExplicitMaxTtl: 0,
      tokenPeriod: 0,
      tokenNumUses: 0,
      tokenType: 'service',
      tokenBoundCidrs: [],
    });
    new TerraformOutput(apps, `${role}-role-id`, {
      value: r.roleId,
      description: `Role ID of AppRole ${role} (non-sensitive; the Secret ID is issued by deployment automation)`,
    });
  }
  app.synth();
  return outdir;
}

/**
 * The resources of both sides, per stack, as `type: count` with every attribute value but references
 * and cdktf's metadata: the comparison is fair only when they are the same.
 */
function resourceSummary(outdir: string): string {
  const strip = (value: unknown): unknown =>
    typeof value === 'string' ? value.replace(/\$\{[^}]*\}/g, '${ref}') : Array.isArray(value) ? value.map(strip)
      : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).filter(([k]) => k !== '//').map(([k, v]) => [k, strip(v)])) : value;
  return ['ci-access', 'app-roles']
    .map((stack) => {
      const json = JSON.parse(fs.readFileSync(path.join(outdir, 'stacks', stack, 'cdk.tf.json'), 'utf8'));
      const blocks = Object.entries(json.resource as Record<string, Record<string, unknown>>).flatMap(([type, byId]) => Object.values(byId).map((b) => `${type} ${JSON.stringify(strip(b))}`));
      return `${stack}: ${blocks.sort().join('\n')}\noutputs ${Object.keys(json.output ?? {}).length}`;
    })
    .join('\n');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Median times of two syntheses, measured alternately so that warm-up and machine load hit both alike. */
function timeAlternately(a: () => string, b: () => string, runs: number): [number, number] {
  const samples: [number[], number[]] = [[], []];
  const once = (fn: () => string): number => {
    const start = process.hrtime.bigint();
    const outdir = fn();
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    fs.rmSync(path.dirname(outdir), { recursive: true, force: true });
    return ms;
  };
  for (let i = 0; i < 5; i++) [a, b].forEach(once); // warm-up: module loading and JIT are not synthesis
  for (let i = 0; i < runs; i++) {
    samples[0].push(once(a));
    samples[1].push(once(b));
  }
  return [median(samples[0]), median(samples[1])];
}

function child(apps: number, withSecrets: boolean): void {
  const start = process.hrtime.bigint();
  const outdir = synthLibrary(apps, withSecrets);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const bytes = fs.statSync(path.join(outdir, 'stacks', 'app-roles', 'cdk.tf.json')).size;
  fs.rmSync(path.dirname(outdir), { recursive: true, force: true });
  // maxRSS is in kilobytes.
  process.stdout.write(JSON.stringify({ ms, maxRssMb: process.resourceUsage().maxRSS / 1024, bytes }));
}

/** The CI key the incremental part's platform trusts: any P-256 public key (nothing is signed). */
const BENCH_CI_KEY = '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYEf3Wwhhn0ynK0y3Oq3Z6q0RL3r0nNn1mPtwOihf3IbBmbQx6G2kWvbAJ2hq0uaLvv7bIY6m9y6w6eHbxZ6BOg==\n-----END PUBLIC KEY-----\n';

/**
 * One synthesis of the incremental part, in its own process: `apps` generated applications in 100
 * hash shards; `seed` stores its output (with render keys) in the cache at `cacheDir`, `incremental`
 * reuses from that cache, `full` renders every stack. Time counts from the process's start.
 */
function incrementalChild(apps: number, mode: 'seed' | 'full' | 'incremental', cacheDir: string): void {
  const outdir = tmp();
  const cache = new SynthesisCache(cacheDir);
  const incremental = mode === 'full' ? false : new IncrementalSynthesis('bench', mode === 'incremental' ? cache.latest() : undefined);
  const app = new SecretStoreApp({ outdir, incremental });
  const platform = definePlatform(app, {
    settings: BENCH_SETTINGS,
    ciKeySource: JwtKeySource.publicKeys([BENCH_CI_KEY]),
    configurationProject: { projectId: '42', localStateReason: 'benchmark: one process synthesizes, never a pipeline' },
    applicationSharding: { by: 'hash', shards: 100 },
  });
  for (let i = 0; i < apps; i++) platform.appRoles.addApplication(`bench-${i}`, { name: `bench${i}`, environment: 'prod', tokenTtl: Duration.hours(1 + (i % 8)) });
  app.synth();
  const ms = performance.now();
  if (mode === 'seed') cache.store({ tree: `bench-${apps}`, library: 'bench' }, outdir);
  const summary = app.lastIncremental;
  // The incremental output is kept for the parent's `moves` (the synth job's next step); the others go.
  if (mode === 'incremental') fs.renameSync(outdir, `${cacheDir}-head`);
  fs.rmSync(path.dirname(outdir), { recursive: true, force: true });
  process.stdout.write(JSON.stringify({ ms, maxRssMb: process.resourceUsage().maxRSS / 1024, rendered: summary?.rendered.length, reused: summary?.reused.length }));
}

/** The incremental part: full synthesis vs incremental after adding one application, at 5,000 and 20,000. */
function incrementalComparison(): void {
  console.log(`incremental synthesis: one application added to N in 100 hash shards; time from node's start, peak RSS (load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  console.log('applications   full synthesis          incremental             stacks rendered / reused   moves (seed -> incremental)');
  const run = (apps: number, mode: string, cacheDir: string) => {
    const result = spawnSync(process.execPath, [__filename, '--incremental-child', String(apps), mode, cacheDir], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (result.status !== 0) throw new Error(`child for ${apps} apps (${mode}) failed:\n${result.stderr}`);
    return JSON.parse(result.stdout) as { ms: number; maxRssMb: number; rendered?: number; reused?: number };
  };
  for (const apps of [5000, 20000]) {
    const cacheDir = path.join(BENCH_DIR, `cache-${apps}`);
    fs.mkdirSync(BENCH_DIR, { recursive: true });
    run(apps, 'seed', cacheDir);
    const full = run(apps + 1, 'full', cacheDir);
    const incremental = run(apps + 1, 'incremental', cacheDir);
    // The synth job's step after this commit's synthesis: `secretstore-iac moves BASE HEAD`, its own process (start-up included).
    const head = `${cacheDir}-head`;
    const start = performance.now();
    const moves = spawnSync(process.execPath, [path.join(__dirname, '..', 'bin', 'secretstore-iac.js'), 'moves', new SynthesisCache(cacheDir).latest()!.outdir, head], { encoding: 'utf8', maxBuffer: 1 << 24 });
    const movesMs = performance.now() - start;
    if (moves.status !== 0) throw new Error(`moves for ${apps} apps failed:\n${moves.stderr}`);
    console.log(
      `${String(apps).padStart(12)}   ${(full.ms / 1000).toFixed(2).padStart(6)} s ${full.maxRssMb.toFixed(0).padStart(6)} MB` +
        `    ${(incremental.ms / 1000).toFixed(2).padStart(6)} s ${incremental.maxRssMb.toFixed(0).padStart(6)} MB    ${incremental.rendered} / ${incremental.reused}` +
        `                  ${(movesMs / 1000).toFixed(2).padStart(6)} s`,
    );
  }
  fs.rmSync(BENCH_DIR, { recursive: true, force: true });
}

function main(): void {
  if (process.argv[2] === '--child') return child(Number(process.argv[3]), process.argv[4] === 'secrets');
  if (process.argv[2] === '--incremental-child') return incrementalChild(Number(process.argv[3]), process.argv[4] as 'seed' | 'full' | 'incremental', process.argv[5]);
  if (process.argv[2] === '--incremental') return incrementalComparison();
  const runs = Number(process.env.BENCH_RUNS ?? 41);
  console.log(`secretstore-iac synthesis benchmark (node ${process.version}, ${os.cpus().length} cpus, median of ${runs} runs)`);
  const policies = libraryPolicyTexts();
  const synthRawStacks = () => synthRaw(policies);
  const [libraryOut, rawOut] = [synthLibraryStacksOnly(), synthRawStacks()];
  const same = resourceSummary(libraryOut) === resourceSummary(rawOut);
  [libraryOut, rawOut].forEach((dir) => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));
  const [lib, raw] = timeAlternately(synthLibraryStacksOnly, synthRawStacks, runs);
  const [full] = timeAlternately(() => synthLibrary(), synthRawStacks, runs);
  console.log(`platform stacks via library      ${lib.toFixed(1).padStart(8)} ms`);
  console.log(`same resources, raw provider     ${raw.toFixed(1).padStart(8)} ms   (${same ? 'same resources and values on both sides' : 'NOT the same resources: the figures do not compare'})`);
  console.log(`library overhead                 ${(lib / raw).toFixed(2).padStart(8)} x   (target <= 1.20 x)`);
  console.log(`with CI template + agent files   ${full.toFixed(1).padStart(8)} ms   (5 more files than the raw stacks write)`);
  console.log('');
  console.log('generated      with agent files (3 per app)     stacks only (apps without secrets)   app-roles JSON');
  console.log('applications  synth time     peak RSS          synth time     peak RSS');
  const run = (apps: number, mode: string) => {
    const result = spawnSync(process.execPath, [__filename, '--child', String(apps), mode], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`child for ${apps} apps failed:\n${result.stderr}`);
    return JSON.parse(result.stdout) as { ms: number; maxRssMb: number; bytes: number };
  };
  for (const apps of [100, 1000, 5000]) {
    const full = run(apps, 'secrets');
    const bare = run(apps, 'bare');
    console.log(
      `${String(apps).padStart(12)}  ${(full.ms / 1000).toFixed(2).padStart(8)} s   ${full.maxRssMb.toFixed(0).padStart(6)} MB` +
        `          ${(bare.ms / 1000).toFixed(2).padStart(8)} s   ${bare.maxRssMb.toFixed(0).padStart(6)} MB   ${(full.bytes / 1e6).toFixed(1).padStart(6)} MB`,
    );
  }
  console.log('targets: 1,000 apps under 2 s and 400 MB, growing linearly');
  console.log('(the difference between the two columns is writing the agent files: disk-bound on this VM)');
  console.log('');
  incrementalComparison();
}

main();
