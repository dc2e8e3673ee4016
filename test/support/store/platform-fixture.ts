/**
 * Synthesizes the platform (or a test-only variant of it) with a test configuration into a temp
 * dir and applies it to a real store with the real engine. Shared by the store tests.
 *
 * Layout of a fixture dir:
 *   <dir>/cdktf.out/                 the latest synthesis (replaced by every synth)
 *   <dir>/stacks/<stack>/            the engine's working dir per stack: cdk.tf.json copied from the
 *                                    synthesis, .terraform/, the lock file and the local state
 * Keeping the working dirs apart from the synthesis output means `tofu init` runs once per stack
 * and fixture, and the state survives re-synthesis (SecretStoreApp.synth replaces its output dir
 * as a whole, and the stacks' default local state file lives in the stack dir).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Duration, JwtKeySource, SecretStoreApp } from '../../../lib';
import { definePlatform, Platform } from '../../../lib/platform/platform';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { REGISTRY_ACCOUNT_KEYS } from '../../../lib/constructs/registry-service-account';
import { SPEC_CI_SECRETS as SPEC_CI_SECRETS_DECLARED, SPEC_REGISTRY_ACCOUNTS } from '../../../lib/model/spec-platform-declarations';
import { runEngine } from './engine';
import { RunningStore, storeRequest, StoreResponse } from './store-server';
import { storeKind } from './toolchain-env';
import { gitlabJobClaims, JwtSigningKey, signJwt } from './jwt-signer';

/** The test installation's placeholders. */
export const TEST_SETTINGS = {
  organisation: 'acme',
  ciUrl: 'https://gitlab.test.example',
  registryHost: 'registry.test.example',
  registryPorts: { push: 8443, pull: 8444 },
} as const;

/**
 * Spec §2.3: the logical paths `registry-ci` reads (KV v2, mount `secret/`), with their keys: the
 * spec's accounts read by CI and its other CI secrets, read from the one place that declares them.
 */
export const SPEC_CI_SECRETS: Readonly<Record<string, readonly string[]>> = Object.fromEntries([
  ...SPEC_REGISTRY_ACCOUNTS.filter((a) => a.readByCi).map((a) => [`registry/svc-${a.name}`, REGISTRY_ACCOUNT_KEYS] as const),
  ...SPEC_CI_SECRETS_DECLARED.map((s) => [s.path, s.keys] as const),
]);

/** CI job timeout of the test configuration (the CI store token's TTL). */
export const TEST_JOB_TIMEOUT = Duration.minutes(15);

/**
 * The platform configuration used by the store tests: test settings, the test's own public key as
 * the CI key source, a 15 minute job timeout, default bound claims unless overridden.
 * The PEM is passed as node exports it (with its trailing newline); the library trims it.
 */
export function testPlatformConfig(publicKeyPem: string, overrides: Partial<PlatformConfig> = {}): PlatformConfig {
  return {
    ciKeySource: JwtKeySource.publicKeys([publicKeyPem]),
    ciJobTimeout: TEST_JOB_TIMEOUT,
    ...overrides,
    settings: { ...TEST_SETTINGS, store: { kind: storeKind() }, ...overrides.settings },
  };
}

/** One resource change of a saved plan (`tofu show -json`). */
export interface PlannedChange {
  /** `vault_policy.registry-ci_policy_FD942459`. */
  address: string;
  type: string;
  /** `["no-op"]`, `["create"]`, `["update"]`, `["delete","create"]`, ... */
  actions: string[];
  before: any;
  after: any;
}

/** A saved plan, as `tofu show -json` renders it. */
export interface PlanSummary {
  /** Every resource change, including no-ops. */
  changes: PlannedChange[];
  /** Output changes by name. */
  outputChanges: Record<string, { actions: string[] }>;
  /** The raw JSON. */
  raw: any;
}

/** Serializes `tofu init` runs of this process (they share the plugin cache). */
let initQueue: Promise<void> = Promise.resolve();
/** The dependency lock file of each engine's first init (every stack uses the same pinned vault provider). */
const providerLocks = new Map<string, string>();

/** A synthesis directory plus one engine working dir per stack, applied against one store. */
export class PlatformFixture {
  /** Creates a fixture in a new private temp dir. */
  static create(store: RunningStore, label = 'platform'): PlatformFixture {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `secretstore-iac-${label}-`));
    fs.chmodSync(dir, 0o700);
    return new PlatformFixture(store, dir);
  }

  /** Stack names of the latest synthesis. */
  stacks: string[] = [];
  private readonly initialized = new Set<string>();

  private constructor(
    /** The store the stacks are applied to (with its root token). */
    readonly store: RunningStore,
    /** The fixture's temp dir. */
    readonly dir: string,
  ) {}

  /**
   * The engine's working dir of a stack: the synthesized stack directory itself, as in the README's
   * workflow (state lives outside the output, `.terraform/` is carried over by re-synthesis).
   */
  stackDir(stack: string): string {
    return path.join(this.dir, 'cdktf.out', 'stacks', stack);
  }

  /** The latest synthesized JSON of a stack. */
  stackJson(stack: string): any {
    return JSON.parse(fs.readFileSync(path.join(this.stackDir(stack), 'cdk.tf.json'), 'utf8'));
  }

  /**
   * Synthesizes what `define` declares in a fresh SecretStoreApp and copies each stack's
   * cdk.tf.json into its working dir.
   * @returns what `define` returned (the stacks, for assertions)
   */
  synth<T>(define: (app: SecretStoreApp) => T): T {
    const outdir = path.join(this.dir, 'cdktf.out');
    const app = new SecretStoreApp({ outdir });
    const result = define(app);
    app.synth();
    this.stacks = fs.readdirSync(path.join(outdir, 'stacks')).sort();
    return result;
  }

  /**
   * Synthesizes the platform (`definePlatform`) with `config`; `extend` may add constructs (e.g. one
   * more registry account) before synthesis.
   */
  synthPlatform(config: PlatformConfig, extend?: (platform: Platform, app: SecretStoreApp) => void): Platform {
    return this.synth((app) => {
      const platform = definePlatform(app, config);
      extend?.(platform, app);
      return platform;
    });
  }

  /** Extra environment of every engine run (e.g. PG_CONN_STR for a PostgreSQL state backend). */
  engineEnv: Record<string, string> = {};

  /** The engine binary of every run (test/support/store/engine-matrix.ts); default the toolchain's OpenTofu. */
  engineBinary: string | undefined;

  /** Runs the engine in a stack's working dir against the fixture's store. */
  engine(stack: string, args: string[], allowCodes?: number[]) {
    return runEngine(this.stackDir(stack), args, { store: this.store, allowCodes, env: this.engineEnv, binary: this.engineBinary });
  }

  /**
   * `tofu init`, once per stack and fixture (providers come from the shared plugin cache). Inits are
   * serialized within the process: without a lock file the engine re-installs the provider into the
   * shared cache, and two concurrent installs race ("failed to compute a checksum ... no such file").
   */
  async init(stack: string): Promise<void> {
    if (this.initialized.has(stack)) return;
    const lockFile = path.join(this.stackDir(stack), '.terraform.lock.hcl');
    const run = initQueue.then(async () => {
      // With a lock file the engine links the provider from the cache instead of re-installing it.
      const engine = this.engineBinary ?? '';
      const providerLock = providerLocks.get(engine);
      if (providerLock !== undefined && !fs.existsSync(lockFile)) fs.writeFileSync(lockFile, providerLock);
      await this.engine(stack, ['init']);
      if (providerLock === undefined) providerLocks.set(engine, fs.readFileSync(lockFile, 'utf8'));
    });
    initQueue = run.then(
      () => undefined,
      () => undefined,
    );
    await run;
    this.initialized.add(stack);
  }

  /** `tofu apply -auto-approve` of the given stacks (default: all of the latest synthesis), in parallel. */
  async apply(stacks: readonly string[] = this.stacks): Promise<void> {
    await Promise.all(
      stacks.map(async (stack) => {
        await this.init(stack);
        await this.engine(stack, ['apply', '-auto-approve']);
      }),
    );
  }

  /** `tofu plan -detailed-exitcode`: code 0 = no changes, 2 = changes. */
  async plan(stack: string): Promise<{ code: number; stdout: string }> {
    await this.init(stack);
    const res = await this.engine(stack, ['plan', '-detailed-exitcode'], [0, 2]);
    return { code: res.code, stdout: res.stdout };
  }

  /** Plans into a file and returns `tofu show -json` of it. */
  async planChanges(stack: string): Promise<PlanSummary> {
    await this.init(stack);
    await this.engine(stack, ['plan', '-out=test.tfplan']);
    const shown = await this.engine(stack, ['show', '-json', 'test.tfplan']);
    fs.rmSync(path.join(this.stackDir(stack), 'test.tfplan'), { force: true });
    const raw = JSON.parse(shown.stdout);
    const changes: PlannedChange[] = (raw.resource_changes ?? []).map((rc: any) => ({
      address: rc.address,
      type: rc.type,
      actions: rc.change.actions,
      before: rc.change.before,
      after: rc.change.after,
    }));
    const outputChanges = Object.fromEntries(
      Object.entries(raw.output_changes ?? {}).map(([name, oc]: [string, any]) => [name, { actions: oc.actions }]),
    );
    return { changes, outputChanges, raw };
  }

  /** `tofu output -json`, values by output name. */
  async outputs(stack: string): Promise<Record<string, any>> {
    const res = await this.engine(stack, ['output', '-json']);
    const parsed = JSON.parse(res.stdout) as Record<string, { value: any }>;
    return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, v.value]));
  }

  /** Deletes the fixture dir (state and synthesis included). */
  cleanup(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Synthesizes the platform with `config` in a new fixture and applies all its stacks. */
export async function applyPlatform(
  store: RunningStore,
  config: PlatformConfig,
  extend?: (platform: Platform, app: SecretStoreApp) => void,
): Promise<{ fixture: PlatformFixture; platform: Platform }> {
  const fixture = PlatformFixture.create(store);
  const platform = fixture.synthPlatform(config, extend);
  await fixture.apply();
  return { fixture, platform };
}

/** The Role ID output of each application of the platform, by role name (`tofu output`). */
export async function roleIdsFromOutputs(fixture: PlatformFixture, platform: Platform): Promise<Record<string, string>> {
  const outputs = await fixture.outputs('app-roles');
  return Object.fromEntries(platform.appRoles.applications.map((a) => [a.roleName, outputs[a.roleIdOutput.friendlyUniqueId]]));
}

// ---- store helpers ------------------------------------------------------------------------------

/** Random test values for the given keys (never real secrets; still never printed). */
export function testSecretValues(keys: readonly string[]): Record<string, string> {
  return Object.fromEntries(keys.map((k) => [k, `test-${k}-${randomBytes(9).toString('base64url')}`]));
}

/** Writes a KV v2 secret with the root token: `mount/data/<logical>`. */
export async function writeKv2(store: RunningStore, mount: string, logical: string, data: Record<string, string>): Promise<void> {
  const res = await storeRequest(store, 'POST', `${mount}/data/${logical}`, { data });
  if (res.status !== 200) throw new Error(`writing ${mount}/data/${logical} failed: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
}

/** Writes a KV v1 secret with the root token: `mount/<logical>`. */
export async function writeKv1(store: RunningStore, mount: string, logical: string, data: Record<string, string>): Promise<void> {
  const res = await storeRequest(store, 'POST', `${mount}/${logical}`, data);
  if (res.status !== 204 && res.status !== 200) {
    throw new Error(`writing ${mount}/${logical} failed: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
  }
}

/** Mounts a KV engine of the given version (root token). */
export async function mountKv(store: RunningStore, mount: string, version: 1 | 2): Promise<void> {
  const res = await storeRequest(store, 'POST', `sys/mounts/${mount}`, { type: 'kv', options: { version: String(version) } });
  if (res.status !== 204 && res.status !== 200) {
    throw new Error(`mounting ${mount} failed: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
  }
}

/** `POST auth/<mount>/login {role, jwt}` without a token. */
export function jwtLogin(store: RunningStore, role: string, jwt: string, mount = 'jwt'): Promise<StoreResponse> {
  return storeRequest(store, 'POST', `auth/${mount}/login`, { role, jwt }, null);
}

/** `POST auth/approle/login {role_id, secret_id}` without a token. */
export function appRoleLogin(store: RunningStore, roleId: string, secretId: string, mount = 'approle'): Promise<StoreResponse> {
  return storeRequest(store, 'POST', `auth/${mount}/login`, { role_id: roleId, secret_id: secretId }, null);
}

/** The store token of a successful login response; throws (without the body) otherwise. */
/**
 * The store token of a configuration pipeline role for a job of project `projectId`, from a JWT login
 * with a job token `key` signs: a protected branch's for the apply role, a merge request's for the plan role.
 */
export async function pipelineRoleToken(store: RunningStore, key: JwtSigningKey, role: 'secretstore-iac-pipeline' | 'secretstore-iac-plan', projectId: string): Promise<string> {
  const claims = role === 'secretstore-iac-pipeline' ? { project_id: projectId, ref_protected: 'true', ref_type: 'branch' } : { project_id: projectId, ref_protected: 'false' };
  return clientToken(await jwtLogin(store, role, signJwt(key.privateKey, gitlabJobClaims(claims, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid })));
}

/**
 * A platform fixture with the configuration pipeline (project `projectId`, local state) and one
 * application, `extend`ed, synthesized, both stacks initialised and ci-access applied with the root
 * token (the administrator's bootstrap): app-roles is left for the pipeline's own first apply.
 */
export async function bootstrappedPipelineFixture(
  store: RunningStore,
  name: string,
  options: { readonly key: JwtSigningKey; readonly projectId: string; readonly binary: string; readonly localStateReason: string; readonly extend: (p: Platform) => void },
): Promise<PlatformFixture> {
  const fixture = PlatformFixture.create(store, name);
  fixture.synthPlatform(
    testPlatformConfig(options.key.publicKeyPem, {
      configurationProject: { projectId: options.projectId, localStateReason: options.localStateReason },
      applications: { 'billing-dev': { name: 'billing', environment: 'dev' } },
    }),
    options.extend,
  );
  const run = (stack: string, args: string[]) => runEngine(fixture.stackDir(stack), args, { store, token: store.rootToken, binary: options.binary, allowCodes: [0, 1] });
  for (const stack of ['ci-access', 'app-roles']) {
    const init = await run(stack, ['init']);
    if (init.code !== 0) throw new Error(`init ${stack}: ${init.stderr}`);
  }
  const bootstrap = await run('ci-access', ['apply', '-auto-approve']);
  if (bootstrap.code !== 0 || bootstrap.stderr !== '') throw new Error(`bootstrap apply of ci-access: ${bootstrap.stdout}\n${bootstrap.stderr}`);
  return fixture;
}

export function clientToken(res: StoreResponse): string {
  const token = res.body?.auth?.client_token;
  if (res.status !== 200 || typeof token !== 'string' || token === '') {
    throw new Error(`login failed: HTTP ${res.status} ${JSON.stringify(res.body?.errors ?? '')}`);
  }
  return token;
}

/**
 * A shallow copy without the credential fields of an `auth` block or a token lookup (`client_token`,
 * `accessor`, `id`, `secret_id`, `secret_id_accessor`), for assertions whose failure output is printed.
 */
export function redacted(value: unknown): any {
  if (value === null || typeof value !== 'object') return value;
  const hidden = new Set(['client_token', 'accessor', 'id', 'secret_id', 'secret_id_accessor']);
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, hidden.has(k) ? '<redacted>' : v]));
}

/** First error message of a store error response. */
export function firstError(res: StoreResponse): string {
  const errors = res.body?.errors;
  return Array.isArray(errors) && errors.length > 0 ? String(errors[0]) : typeof res.body === 'string' ? res.body : '';
}
