/**
 * The configuration the store benchmark's pipeline scenarios synthesize, and its entry point: the
 * spec's platform (`definePlatform`: `ci-access` with the configuration pipeline's two roles,
 * `app-roles` with the AppRole mount) plus N generated applications in hash shards. The benchmark
 * runs it as its own node process, `node dist/bench/bench-platform.js SPEC.json`, as the pipeline's
 * synth job runs `node dist/stacks/main.js`: start-up and module loading are part of the figure.
 */
import * as fs from 'fs';
import { definePlatform, Duration, JwtKeySource, SecretStoreApp } from '../lib';

/** What to synthesize (written as JSON by the benchmark, read by the child process). */
export interface BenchPlatformSpec {
  /** Output directory (`cdktf.out`). */
  readonly outdir: string;
  /** The CI key the JWT method trusts: the benchmark signs its job tokens with the private half. */
  readonly ciPublicKeyPem: string;
  /** The configuration project's id (the pipeline roles' `project_id` claim). */
  readonly projectId: string;
  /** Hash shards of the applications. */
  readonly shards: number;
  /** The generated applications: `bench<index>-prod`, with their token TTL in hours. */
  readonly applications: readonly { readonly index: number; readonly tokenTtlHours: number }[];
}

/** The role name of generated application `index` (name `bench<index>`, environment `prod`). */
export function benchRoleName(index: number): string {
  return `bench${index}-prod`;
}

/** The benchmark's settings (the JWT method's issuer and audience are `ciUrl`). */
export const BENCH_SETTINGS = { organisation: 'acme', ciUrl: 'https://gitlab.acme.example', registryHost: 'registry.acme.example' } as const;

/** Synthesizes `spec` into `spec.outdir`. */
export function synthesizeBenchPlatform(spec: BenchPlatformSpec): void {
  const app = new SecretStoreApp({ outdir: spec.outdir });
  const platform = definePlatform(app, {
    settings: BENCH_SETTINGS,
    ciKeySource: JwtKeySource.publicKeys([spec.ciPublicKeyPem]),
    // One process plans and applies the benchmark's stacks: its state files stay where it left them.
    configurationProject: { projectId: spec.projectId, localStateReason: 'benchmark: one process plans and applies, never a pipeline' },
    applicationSharding: { by: 'hash', shards: spec.shards },
  });
  for (const a of spec.applications) {
    // The role name is benchRoleName(a.index): `{name}-{environment}`.
    platform.appRoles.addApplication(`bench-${a.index}`, { name: `bench${a.index}`, environment: 'prod', tokenTtl: Duration.hours(a.tokenTtlHours) });
  }
  app.synth();
}

if (require.main === module) {
  synthesizeBenchPlatform(JSON.parse(fs.readFileSync(process.argv[2], 'utf8')) as BenchPlatformSpec);
}
