import * as fs from 'fs';
import * as path from 'path';
import { inspect } from 'util';
import { Construct } from 'constructs';
import {
  AgentConfigurations,
  AppRoleApplication,
  AppRoleAuth,
  CiJwtAuth,
  CiJwtRole,
  CiLoginTemplate,
  CiSecret,
  ConfigurationPipelineRole,
  Duration,
  JwtKeySource,
  KvMount,
  OidcAuth,
  OidcGroupRole,
  PlatformSettings,
  RegistryServiceAccount,
  SecretStoreApp,
  SecretStoreStack,
  SecretStoreValidationError,
} from '../../../lib';
import { definePlatform, Platform } from '../../../lib/platform/platform';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig } from '../../support/platform-config';
import { SeededRandom } from '../../support/seeded-random';
import { tempOutdir } from '../../support/synthesized-platform';

// Issue 19 §2: random JSON-shaped values in every props field of every construct and of
// PlatformConfig (the e2e template's and the pipeline's props through e2eTests and configurationProject: a second one would write the same files) give a synthesis that succeeds or a SecretStoreValidationError: never another
// exception, never a directory left behind.

const random = SeededRandom.fromEnvironment('props-fuzz');

/** An object with an own key (`__proto__` included, as JSON.parse makes it). */
function withOwnKey(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

const KEYS = ['constructor', '__proto__', 'valueOf', 'toString', 'hasOwnProperty', 'a', 'namespace_path', 'push', 'pull', 'path'];
const NUMBERS = [NaN, Infinity, -Infinity, -1, 0, -0, 1, 1.5, 42, 8100, 65536, 1e300, Number.MAX_SAFE_INTEGER + 2];

/** A JSON-shaped value (and the few non-JSON ones configurations meet: NaN, Infinity, undefined). */
function randomValue(depth = 0): unknown {
  const roll = random.int(depth > 2 ? 5 : 8);
  switch (roll) {
    case 0:
      return random.hostileString(20);
    case 1:
      return random.pick(['', 'acme', 'token', 'no', 'true', 'https://u:p@x.example', 'http://ci.example', '--help', '..', 'stacks/x', 'ci', 'LD', 'preload']);
    case 2:
      return random.pick(NUMBERS);
    case 3:
      return random.pick([true, false]);
    case 4:
      return random.pick([null, undefined]);
    case 5:
    case 6:
      return Array.from({ length: random.int(4) }, () => randomValue(depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = random.int(4); i > 0; i--) withOwnKey(o, random.next() < 0.7 ? random.pick(KEYS) : random.hostileString(8), randomValue(depth + 1));
      return o;
    }
  }
}

/** One construct of the platform, built with its valid props and some fields replaced. */
interface Target {
  readonly name: string;
  readonly fields: readonly string[];
  readonly build: (p: Platform, props: Record<string, unknown>) => void;
  readonly valid: (p: Platform) => Record<string, unknown>;
}

const any = (x: Record<string, unknown>) => x as any;

const TARGETS: Target[] = [
  {
    name: 'CiSecret',
    fields: ['path', 'keys', 'consumers', 'description', 'readers'],
    valid: (p) => ({ path: 'sonar/token', keys: ['token'], consumers: ['scan'], description: 'scan', readers: [p.ciAccess.registryCi] }),
    build: (p, props) => new CiSecret(p.ciAccess, 'fuzz', any(props)),
  },
  {
    name: 'RegistryServiceAccount',
    fields: ['name', 'permissions', 'usedBy', 'consumers', 'readers', 'olderFormGrant'],
    valid: (p) => ({ name: 'helm', permissions: ['raw:read'], usedBy: 'charts', consumers: ['chart-publish'], readers: [p.ciAccess.registryCi] }),
    build: (p, props) => new RegistryServiceAccount(p.ciAccess, 'fuzz', any(props)),
  },
  {
    name: 'AppRoleApplication',
    fields: ['auth', 'name', 'environment', 'roleName', 'secrets', 'tokenTtl', 'tokenMaxTtl', 'secretIdTtl', 'renewalInterval', 'secretIdNumUses', 'secretIdBoundCidrs', 'tokenBoundCidrs'],
    valid: (p) => ({ auth: p.appRoles.appRoleAuth, name: 'billing', environment: 'dev', secrets: { db: ['pg_user'] } }),
    build: (p, props) => new AppRoleApplication(p.appRoles, 'fuzz', any(props)),
  },
  {
    name: 'AppRoleAuth',
    fields: ['path'],
    valid: () => ({ path: 'approle2' }),
    build: (p, props) => new AppRoleAuth(p.appRoles, 'fuzz', any(props)),
  },
  {
    name: 'CiJwtAuth',
    fields: ['path', 'issuer', 'keySource'],
    valid: () => ({ path: 'jwt2' }),
    build: (p, props) => new CiJwtAuth(p.ciAccess, 'fuzz', any(props)),
  },
  {
    name: 'CiJwtRole',
    fields: ['auth', 'roleName', 'audiences', 'boundClaims', 'boundClaimsType', 'userClaim', 'jobTimeout', 'tokenType', 'tokenBoundCidrs'],
    valid: (p) => ({ auth: p.ciAccess.jwtAuth, roleName: 'other-ci' }),
    build: (p, props) => new CiJwtRole(p.ciAccess, 'fuzz', any(props)).policy.addRule('secret/data/a', ['read'], 'fuzz'),
  },
  {
    name: 'ConfigurationPipelineRole',
    fields: ['auth', 'projectId', 'access', 'roleName', 'jobTimeout'],
    valid: (p) => ({ auth: p.ciAccess.jwtAuth, projectId: '7', roleName: 'other-pipeline' }),
    build: (p, props) => new ConfigurationPipelineRole(p.ciAccess, 'fuzz', any(props)),
  },
  {
    name: 'CiLoginTemplate',
    fields: ['role', 'directory', 'registryLoginCommand', 'readWhenSet', 'variablePrefixes'],
    valid: (p) => ({ role: p.ciAccess.registryCi, directory: 'ci2' }),
    build: (p, props) => new CiLoginTemplate(p.ciAccess, 'fuzz', any(props)),
  },
  {
    name: 'AgentConfigurations',
    fields: ['applications', 'outputDirectory', 'paths', 'secretRefreshInterval', 'exitOnError', 'storeAddress', 'renewalLoop', 'proxyPort', 'apiProxy'],
    valid: () => ({ outputDirectory: 'agents2' }),
    build: (p, props) => new AgentConfigurations(p.appRoles, 'fuzz', any(props)),
  },
  {
    name: 'OidcAuth',
    fields: ['path', 'discoveryUrl', 'clientId', 'storeUrl', 'groupsClaim', 'userClaim', 'scopes', 'cliRedirect', 'clientSecretVersion', 'local'],
    valid: () => ({ path: 'sso', discoveryUrl: 'https://sso.acme.example', clientId: 'secretstore', storeUrl: 'https://vault.acme.example' }),
    // With one group role, as SSI-R13 asks.
    build: (p, props) => new OidcGroupRole(p.ciAccess, 'fuzz-role', { auth: new OidcAuth(p.ciAccess, 'fuzz', any(props)), groups: ['ops'], roleName: 'fuzz-people' }),
  },
  {
    name: 'OidcGroupRole',
    fields: ['auth', 'groups', 'roleName', 'reads', 'tokenTtl', 'tokenMaxTtl', 'tokenBoundCidrs'],
    valid: (p) => ({
      auth: new OidcAuth(p.ciAccess, 'fuzz-auth', { path: 'sso', discoveryUrl: 'https://sso.acme.example', clientId: 'secretstore', storeUrl: 'https://vault.acme.example' }),
      groups: ['ops'],
      roleName: 'fuzz-people',
      reads: [{ path: 'team/ops', subtree: true }],
    }),
    build: (p, props) => new OidcGroupRole(p.ciAccess, 'fuzz', any(props)),
  },
  {
    name: 'SecretStoreStack',
    fields: ['settings', 'stateBackend', 'providerVersion'],
    valid: (p) => ({ settings: p.ciAccess.settings }),
    build: (p, props) => new SecretStoreStack(p.ciAccess.node.scope as Construct, 'fuzz-stack', any(props)),
  },
];

/** PlatformConfig fields, dotted: the top level, the settings, one configured account, and what they hand on. */
const CONFIG_FIELDS = [
  'settings', 'settings.organisation', 'settings.ciUrl', 'settings.registryHost', 'settings.registryPorts', 'settings.registryPorts.push',
  'settings.kvMount', 'settings.insecureHttpHosts', 'ciKeySource', 'ciJobTimeout', 'ciBoundClaims', 'ciBoundClaims.namespace_path',
  'accounts', 'accounts.mirror', 'accounts.mirror.readByCi', 'accounts.mirror.permissions', 'accounts.mirror.usedBy', 'accounts.mirror.consumers',
  'accounts.mirror.olderFormGrant', 'agents', 'agents.outputDirectory', 'agents.paths', 'agents.paths.envFile', 'agents.exitOnError', 'agents.storeAddress',
  'agents.proxyPort', 'agents.apiProxy', 'agents.paths.proxyConfigFile', 'agents.secretRefreshInterval', 'agents.renewalLoop', 'configurationProject', 'configurationProject.projectId',
  'configurationProject.committedCopy', 'configurationProject.image', 'configurationProject.acknowledgeLabel',
  'configurationProject.noteTokenVariable', 'configurationProject.installCommand', 'configurationProject.localStateReason', 'e2eTests', 'e2eTests.ciBaseUrl', 'e2eTests.branch', 'e2eTests.needs', 'e2eTests.login',
  'e2eTests.image', 'e2eTests.reportingReporter', 'e2eTests.login.usernameField', 'e2eTests.login.entryFields',
  'people', 'people.discoveryUrl', 'people.clientId', 'people.storeUrl', 'people.groupsClaim', 'people.scopes', 'people.clientSecretVersion',
  'people.groups', 'people.groups.ops', 'people.groups.ops.groups', 'people.groups.ops.reads', 'people.groups.ops.tokenTtl',
];

/** A valid people section of the fuzzed configuration (its fields are fuzzed like the others). */
const PEOPLE_BASE = {
  discoveryUrl: 'https://sso.acme.example',
  clientId: 'secretstore',
  storeUrl: 'https://vault.acme.example',
  groups: { ops: { groups: ['ops'], reads: [{ path: 'team/ops', subtree: true }] } },
};

/** Model values a random case may also use where a class instance is expected. */
function randomModelValue(): unknown {
  const text = randomValue() as never;
  return random.pick([
    () => Duration.parse(text),
    () => Duration.minutes(text),
    () => Duration.seconds(random.pick(NUMBERS)),
    () => JwtKeySource.jwksUrl(text),
    () => JwtKeySource.oidcDiscovery(text),
    () => JwtKeySource.publicKeys(text),
    () => new KvMount(text, random.pick([1, 2, 3, '2', NaN]) as never),
    () => new PlatformSettings(text),
  ])();
}

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let at = target;
  for (const key of keys.slice(0, -1)) {
    const next = Object.prototype.hasOwnProperty.call(at, key) ? at[key] : undefined;
    const copy = next !== null && typeof next === 'object' && !Array.isArray(next) && Object.getPrototypeOf(next) === Object.prototype ? { ...(next as object) } : {};
    withOwnKey(at, key, copy);
    at = copy as Record<string, unknown>;
  }
  withOwnKey(at, keys[keys.length - 1], value);
}

/** Synthesizes; returns 'ok' or 'refused', and fails the test on anything else or a leftover directory. */
function synthesize(config: unknown, change: (p: Platform) => void, context: unknown): 'ok' | 'refused' {
  const outdir = tempOutdir();
  const app = new SecretStoreApp({ outdir }).define((a) => change(definePlatform(a, config as PlatformConfig)));
  try {
    app.synth();
    return 'ok';
  } catch (e) {
    const what = e instanceof SecretStoreValidationError ? 'SecretStoreValidationError' : String((e as Error)?.stack ?? e);
    expect({ context, what }).toEqual({ context, what: 'SecretStoreValidationError' });
    expect({ context, left: fs.readdirSync(path.dirname(outdir)) }).toEqual({ context, left: [] });
    return 'refused';
  }
}

const value = () => (random.next() < 0.2 ? randomModelValue() : randomValue());

describe(`random JSON-shaped props give a synthesis or a SecretStoreValidationError, nothing else (seed ${random.seed})`, () => {
  it.each(TARGETS.map((t) => [t.name, t] as const))('every props field of %s', (_name, target) => {
    const outcomes = { ok: 0, refused: 0 };
    for (let i = 0; i < 14; i++) {
      const changed = [random.pick(target.fields), ...(random.next() < 0.3 ? [random.pick(target.fields)] : [])];
      const values = changed.map(() => value());
      const context = { seed: random.seed, target: target.name, i, changed, values: values.map((v) => inspect(v)) };
      outcomes[
        synthesize(platformConfig, (p) => {
          const props = target.valid(p);
          changed.forEach((f, j) => withOwnKey(props, f, values[j]));
          target.build(p, random.next() < 0.05 ? (randomValue() as Record<string, unknown>) : props);
        }, context)
      ]++;
    }
    expect(outcomes.refused).toBeGreaterThan(0);
  });

  it('every field of PlatformConfig', () => {
    const outcomes = { ok: 0, refused: 0 };
    for (let i = 0; i < 70; i++) {
      const changed = [random.pick(CONFIG_FIELDS), ...(random.next() < 0.3 ? [random.pick(CONFIG_FIELDS)] : [])];
      const config = JSON.parse(JSON.stringify({ ...platformConfig, ciJobTimeout: undefined })) as Record<string, unknown>;
      config.accounts = { mirror: { permissions: ['raw:read'], usedBy: 'mirror', consumers: ['mirror-sync'] } };
      config.people = JSON.parse(JSON.stringify(PEOPLE_BASE));
      const values = changed.map(() => value());
      changed.forEach((f, j) => setPath(config, f, values[j]));
      const context = { seed: random.seed, i, changed, values: values.map((v) => inspect(v)) };
      outcomes[synthesize(random.next() < 0.03 ? randomValue() : config, () => undefined, context)]++;
    }
    expect(outcomes.refused).toBeGreaterThan(0);
  });

  it('the unchanged configuration, as JSON, synthesizes (the fuzzing starts from a valid base)', () => {
    const config = JSON.parse(JSON.stringify({ ...platformConfig, ciJobTimeout: undefined }));
    config.accounts = { mirror: { permissions: ['raw:read'], usedBy: 'mirror', consumers: ['mirror-sync'] } };
    config.people = JSON.parse(JSON.stringify(PEOPLE_BASE));
    expect(synthesize(config, () => undefined, 'base')).toBe('ok');
    TARGETS.forEach((t) => expect([t.name, synthesize(platformConfig, (p) => t.build(p, t.valid(p)), t.name)]).toEqual([t.name, 'ok']));
  });
});
