/**
 * Synthesis benchmark (not a test): prints figures, asserts nothing.
 *
 * 1. Library overhead: the platform stacks synthesized through the library, next to the same
 *    resources written with the raw provider classes (target: at most 1.2x).
 * 2. Scale: time and peak memory (max RSS of a fresh process) to synthesize 100, 1,000 and 5,000
 *    generated applications (target: 1,000 apps under 2 s and 400 MB, growing linearly).
 *
 * Run: `npm run bench` (builds first). Each scale point runs in its own node process so that its
 * peak memory is its own.
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
import { AppRoleApplication, SecretStoreApp, SynthesisArtifact } from '../lib';
import { definePlatform } from '../stacks/platform';
import { platformConfig } from '../stacks/platform.config';

// Synthesis happens in the project (cdktf.out), so the benchmark writes below the working directory:
// on this machine /tmp creates files ~40x slower than the same disk elsewhere (3.9 s vs 0.1 s for
// 3,000 files), which would measure the sandbox rather than the library.
const BENCH_DIR = path.resolve('.bench-out');
const tmp = () => {
  fs.mkdirSync(BENCH_DIR, { recursive: true });
  return path.join(fs.mkdtempSync(path.join(BENCH_DIR, 'run-')), 'out');
};

/** Measures the library's own work on the stacks: the same app without writing its artifact files. */
class StacksOnlyApp extends SecretStoreApp {
  collectArtifacts(): SynthesisArtifact[] {
    return [];
  }
}

/** The platform through the library without its CI template and agent files. */
function synthLibraryStacksOnly(): string {
  const outdir = tmp();
  const app = new StacksOnlyApp({ outdir });
  definePlatform(app, platformConfig);
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
  const platform = definePlatform(app, platformConfig);
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

/** The same resources with the raw provider classes and literal policy texts, as a hand-written stack would. */
function synthRaw(): string {
  const outdir = tmp();
  const app = new App({ outdir });
  const ci = new TerraformStack(app, 'ci-access');
  new VaultProvider(ci, 'vault', {});
  new LocalBackend(ci, { path: 'terraform.ci-access.tfstate' });
  const jwt = new JwtAuthBackend(ci, 'jwt', {
    path: 'jwt',
    type: 'jwt',
    description: 'CI job tokens',
    boundIssuer: 'https://gitlab.acme.example',
    oidcDiscoveryUrl: 'https://gitlab.acme.example',
  });
  const paths = [
    'codequality/svc-orchestrator',
    'orchestrator/e2e-test-user',
    'registry/svc-executor',
    'registry/svc-orchestrator',
    'testreport/svc-orchestrator',
    'vulnmgmt/svc-orchestrator',
  ];
  const ciPolicy = new Policy(ci, 'registry-ci-policy', {
    name: 'registry-ci',
    policy: paths.map((p) => `path "secret/data/${p}" {\n  capabilities = ["read"]\n}\n`).join('\n'),
  });
  new JwtAuthBackendRole(ci, 'registry-ci', {
    backend: jwt.path,
    roleName: 'registry-ci',
    roleType: 'jwt',
    userClaim: 'project_path',
    userClaimJsonPointer: false,
    boundAudiences: ['https://gitlab.acme.example'],
    boundClaims: { namespace_path: 'acme,acme/*' },
    boundClaimsType: 'glob',
    boundSubject: '',
    claimMappings: {},
    groupsClaim: '',
    disableBoundClaimsParsing: false,
    clockSkewLeeway: 0,
    expirationLeeway: 0,
    notBeforeLeeway: 0,
    verboseOidcLogging: false,
    tokenPolicies: [ciPolicy.name],
    tokenNoDefaultPolicy: false,
    tokenTtl: 3600,
    tokenMaxTtl: 3600,
    tokenExplicitMaxTtl: 3600,
    tokenPeriod: 0,
    tokenNumUses: 0,
    tokenType: 'service',
    tokenBoundCidrs: [],
  });
  const apps = new TerraformStack(app, 'app-roles');
  new VaultProvider(apps, 'vault', {});
  new LocalBackend(apps, { path: 'terraform.app-roles.tfstate' });
  const approle = new AuthBackend(apps, 'approle', { type: 'approle', path: 'approle', description: 'agents' });
  for (const [role, prefix] of [
    ['orchestrator-dev', 'acme/dev/orchestrator'],
    ['authentik-role', 'acme/shared/identity'],
    ['gitlab-role', 'acme/shared/sourcehost'],
    ['registry', 'acme/shared/registry'],
  ]) {
    const policy = new Policy(apps, `${role}-policy`, {
      name: role,
      policy: `path "secret/data/${prefix}/*" {\n  capabilities = ["read"]\n}\n`,
    });
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
    new TerraformOutput(apps, `${role}-role-id`, { value: r.roleId, description: `Role ID of AppRole ${role}` });
  }
  app.synth();
  return outdir;
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

function main(): void {
  if (process.argv[2] === '--child') return child(Number(process.argv[3]), process.argv[4] === 'secrets');
  const runs = Number(process.env.BENCH_RUNS ?? 41);
  console.log(`secretstore-iac synthesis benchmark (node ${process.version}, ${os.cpus().length} cpus, median of ${runs} runs)`);
  const [lib, raw] = timeAlternately(synthLibraryStacksOnly, synthRaw, runs);
  const [full] = timeAlternately(() => synthLibrary(), synthRaw, runs);
  console.log(`platform stacks via library      ${lib.toFixed(1).padStart(8)} ms`);
  console.log(`same resources, raw provider     ${raw.toFixed(1).padStart(8)} ms`);
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
  fs.rmSync(BENCH_DIR, { recursive: true, force: true });
}

main();
