import * as fs from 'fs';
import * as path from 'path';
import { Construct } from 'constructs';
import {
  ApplicationStacks,
  AppRoleApplication,
  AppRoleAuth,
  CiJwtAuth,
  CiJwtRole,
  CiSecret,
  JwtKeySource,
  KvMount,
  RegistryServiceAccount,
  SecretStoreApp,
  SecretStoreValidationError,
} from '../../../lib';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { templateParts } from '../../../lib/sources/terraform-reference';
import { terraformString } from '../../../lib/render/text-encoders';
import { definePlatform, Platform } from '../../../lib/platform/platform';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { PEOPLE, withPeople } from '../../support/people-config';
import { SeededRandom } from '../../support/seeded-random';
import { readOutdir, tempOutdir } from '../../support/synthesized-platform';

// Issue 19: every JSON string in cdk.tf.json is a template to the engine. Whatever a configuration
// puts in any string field of any construct, the synthesized JSON holds no interpolation or
// directive but the references the library builds itself, and the engine reads the text given.

const random = SeededRandom.fromEnvironment('terraform-literal');

/** The attacker's value of the hostile-claim finding: the engine would evaluate it to `acme/,*`. */
const N39 = 'acme/${"\\u002c\\u002a"}';

/** Template-significant pieces, mixed with plain text. */
function templateString(prefix = ''): string {
  const pieces = ['${', '%{', '$${', '%%{', '$$${', '}', '$', '%', '"', '\\', 'path.cwd', 'a', '/', '\\u002c', '*', ',', ' ', '~'];
  let s = prefix;
  const n = 1 + random.int(10);
  for (let i = 0; i < n; i++) s += random.pick(pieces);
  return s;
}

type Field = [string, (value: string) => { config?: PlatformConfig; change?: (p: Platform, app: Construct) => void }];

const withSettings = (settings: Partial<PlatformConfig['settings']>): PlatformConfig => ({
  ...platformConfig,
  settings: { ...platformConfig.settings, ...settings },
});
const ciSecret = (p: Platform, props: Partial<ConstructorParameters<typeof CiSecret>[2]>) =>
  new CiSecret(p.ciAccess, 'x', { path: 'sonar/token', keys: ['token'], consumers: ['scan'], description: 'scan', readers: [p.ciAccess.registryCi], ...props });
const jwtRole = (p: Platform, props: Partial<ConstructorParameters<typeof CiJwtRole>[2]>) =>
  new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'other-ci', ...props }).policy.addRule('secret/data/sonar/x', ['read'], 'test');
const app = (p: Platform, props: Partial<ConstructorParameters<typeof AppRoleApplication>[2]>) =>
  new AppRoleApplication(p.appRoles, 'x', { auth: p.appRoles.appRoleAuth, name: 'billing', environment: 'dev', ...props });
const account = (p: Platform, props: Partial<ConstructorParameters<typeof RegistryServiceAccount>[2]>) =>
  new RegistryServiceAccount(p.ciAccess, 'x', { name: 'helm', permissions: ['raw:read'], usedBy: 'charts', ...props });

/** Every string field a configuration gives a construct, each set to the value under test. */
const FIELDS: Field[] = [
  ['settings.organisation', (v) => ({ config: withSettings({ organisation: v }) })],
  ['settings.ciUrl', (v) => ({ config: withSettings({ ciUrl: `https://ci.example/${v}` }) })],
  ['settings.registryHost', (v) => ({ config: withSettings({ registryHost: v }) })],
  ['settings.kvMount.path', (v) => ({ config: withSettings({ kvMount: new KvMount(v, 2) }) })],
  ['ciKeySource (OIDC discovery)', (v) => ({ config: { ...platformConfig, ciKeySource: JwtKeySource.oidcDiscovery(`https://ci.example/${v}`) } })],
  ['ciKeySource (JWKS URL)', (v) => ({ config: { ...platformConfig, ciKeySource: JwtKeySource.jwksUrl(`https://ci.example/${v}`) } })],
  ['ciKeySource (public key)', (v) => ({ config: { ...platformConfig, ciKeySource: JwtKeySource.publicKeys([`-----BEGIN PUBLIC KEY-----\n${v}\n-----END PUBLIC KEY-----`]) } })],
  ['ciBoundClaims value', (v) => ({ config: { ...platformConfig, ciBoundClaims: { namespace_path: `acme/${v}` } } })],
  ['ciBoundClaims name', (v) => ({ config: { ...platformConfig, ciBoundClaims: { [v]: 'acme', namespace_path: 'acme' } } })],
  ['configurationProject.projectId', (v) => ({ config: { ...platformConfig, configurationProject: { projectId: v, localStateReason: TEST_LOCAL_STATE_REASON } } })],
  ['accounts key', (v) => ({ config: { ...platformConfig, accounts: { [v]: { permissions: ['raw:read'], usedBy: 'x' } } } })],
  ['accounts usedBy', (v) => ({ config: { ...platformConfig, accounts: { helm: { permissions: ['raw:read'], usedBy: v } } } })],
  ['CiJwtAuth issuer', (v) => ({ change: (p) => new CiJwtAuth(p.ciAccess, 'x', { path: 'jwt2', issuer: `https://ci.example/${v}` }) })],
  ['CiJwtAuth path', (v) => ({ change: (p) => new CiJwtAuth(p.ciAccess, 'x', { path: v }) })],
  ['CiJwtRole roleName', (v) => ({ change: (p) => jwtRole(p, { roleName: v }) })],
  ['CiJwtRole audiences', (v) => ({ change: (p) => jwtRole(p, { audiences: [v] }) })],
  ['CiJwtRole boundClaims', (v) => ({ change: (p) => jwtRole(p, { boundClaims: { project_path: `acme/${v}` } }) })],
  ['CiJwtRole userClaim', (v) => ({ change: (p) => jwtRole(p, { userClaim: v }) })],
  ['CiJwtRole tokenBoundCidrs', (v) => ({ change: (p) => jwtRole(p, { tokenBoundCidrs: [v] }) })],
  ['CiJwtRole policy comment', (v) => ({ change: (p) => new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'other-ci' }).policy.addRule('secret/data/sonar/x', ['read'], v) })],
  ['CiSecret path', (v) => ({ change: (p) => ciSecret(p, { path: `sonar/${v}` }) })],
  ['CiSecret keys', (v) => ({ change: (p) => ciSecret(p, { keys: [v] }) })],
  ['CiSecret consumers', (v) => ({ change: (p) => ciSecret(p, { consumers: [v] }) })],
  ['CiSecret description', (v) => ({ change: (p) => ciSecret(p, { description: v }) })],
  ['RegistryServiceAccount name', (v) => ({ change: (p) => account(p, { name: v }) })],
  ['RegistryServiceAccount usedBy', (v) => ({ change: (p) => account(p, { usedBy: v }) })],
  ['AppRoleAuth path', (v) => ({ change: (p) => new AppRoleAuth(p.appRoles, 'x', { path: v }) })],
  // In a shard stack the mount path is written as a literal, not a reference.
  ['ApplicationStacks auth path (read by shards)', (v) => ({ change: (p, a) => new ApplicationStacks(a, 'apps', { settings: p.appRoles.settings, auth: { path: v }, sharding: { by: 'environment' } }).addApplication('x', { name: 'billing', environment: 'dev' }) })],
  ['addApplication stack', (v) => ({ change: (p) => p.appRoles.addApplication('x', { name: 'billing', environment: 'dev', stack: v }) })],
  ['AppRoleApplication name', (v) => ({ change: (p) => app(p, { name: v }) })],
  ['AppRoleApplication environment', (v) => ({ change: (p) => app(p, { environment: v }) })],
  ['AppRoleApplication roleName', (v) => ({ change: (p) => app(p, { roleName: v }) })],
  ['AppRoleApplication secretIdBoundCidrs', (v) => ({ change: (p) => app(p, { secretIdBoundCidrs: [v] }) })],
  ['AppRoleApplication tokenBoundCidrs', (v) => ({ change: (p) => app(p, { tokenBoundCidrs: [v] }) })],
  ['authMounts.approle.description', (v) => ({ config: { ...platformConfig, authMounts: { approle: { description: v } } } })],
  ['authMounts.jwt.description', (v) => ({ config: { ...platformConfig, authMounts: { jwt: { description: v } } } })],
  ['people.discoveryUrl', (v) => ({ config: withPeople({ ...PEOPLE, discoveryUrl: `https://sso.example/${v}` }) })],
  ['people.clientId', (v) => ({ config: withPeople({ ...PEOPLE, clientId: v }) })],
  ['people.storeUrl', (v) => ({ config: withPeople({ ...PEOPLE, storeUrl: `https://vault.example/${v}` }) })],
  ['people.groupsClaim', (v) => ({ config: withPeople({ ...PEOPLE, groupsClaim: v }) })],
  ['people.userClaim', (v) => ({ config: withPeople({ ...PEOPLE, userClaim: v }) })],
  ['people.scopes', (v) => ({ config: withPeople({ ...PEOPLE, scopes: [v] }) })],
  ['people group binding', (v) => ({ config: withPeople({ ...PEOPLE, groups: { ...PEOPLE.groups, developers: { groups: [v] } } }) })],
];

type Outcome = { refused: string[] } | { outdir: string };

function synthesize(field: Field, value: string): Outcome {
  const { config, change } = field[1](value);
  const outdir = tempOutdir();
  const a = new SecretStoreApp({ outdir });
  a.define((x) => {
    const p = definePlatform(x, config ?? platformConfig);
    change?.(p, x);
  });
  try {
    a.synth();
    return { outdir };
  } catch (e) {
    if (!(e instanceof SecretStoreValidationError)) throw e;
    expect(fs.existsSync(outdir)).toBe(false);
    return { refused: e.problems.map((p) => p.message) };
  }
}

/** Every string of a JSON value, object keys included, with where it is. */
function* strings(value: unknown, where: string): Generator<[string, string]> {
  if (typeof value === 'string') yield [where, value];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* strings(v, `${where}[${i}]`);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      yield [`${where} (key)`, k];
      yield* strings(v, `${where}.${k}`);
    }
  }
}

/** The resource addresses of a stack (`vault_policy.x`). */
function addresses(stack: any): Set<string> {
  return new Set(Object.entries(stack.resource ?? {}).flatMap(([type, blocks]) => Object.keys(blocks as object).map((id) => `${type}.${id}`)));
}

/**
 * Template problems of a synthesized output: any interpolation that is not a whole-string reference
 * `${type.id.attribute}` to a resource of the same stack or `${var.name}` to a variable it declares,
 * any directive, anything unterminated.
 */
function templateProblems(outdir: string): string[] {
  const out = readOutdir(outdir);
  const problems: string[] = [];
  for (const [name, stack] of Object.entries(out.stacks)) {
    const own = addresses(stack);
    for (const [where, text] of strings(stack, name)) {
      let parts;
      try {
        parts = templateParts(text, (why) => new Error(why));
      } catch (e) {
        problems.push(`${where}: ${(e as Error).message}`);
        continue;
      }
      for (const part of parts) {
        if (part.expression === undefined) continue;
        const ref = /^([a-z0-9_]+\.[A-Za-z0-9_-]+)\.[a-z0-9_]+$/.exec(part.expression);
        // The other reference the library builds: a variable the stack declares (the OIDC client secret).
        const variable = /^var\.([A-Za-z0-9_-]+)$/.exec(part.expression);
        const known = ref ? own.has(ref[1]) : variable ? Object.prototype.hasOwnProperty.call(stack.variable ?? {}, variable[1]) : false;
        if (parts.length !== 1 || !known) problems.push(`${where}: interpolation \${${part.expression}} in ${JSON.stringify(text)}`);
      }
    }
  }
  return problems;
}

/** Every literal string of the output, as the engine reads it (escapes decoded). */
function literals(outdir: string): string[] {
  const out = readOutdir(outdir);
  return Object.entries(out.stacks).flatMap(([name, stack]) =>
    [...strings(stack, name)].flatMap(([, text]) => templateParts(text, (why) => new Error(why)).map((p) => p.literal)),
  );
}

describe('Terraform JSON strings are literals: no input produces a template in cdk.tf.json', () => {
  it('the encoder reads back as exactly the text, and leaves no interpolation or directive', () => {
    const samples = ['', 'plain', '${x}', '%{if}', '$${x}', '%%{x}', '$$${x}', '$', '%', '${', '}', N39, '$${path.cwd}%{'];
    for (let i = 0; i < 200; i++) samples.push(templateString());
    for (const s of samples) {
      const parts = templateParts(terraformString(s), (why) => new Error(why));
      expect({ s, parts }).toEqual({ s, parts: [{ literal: s }] });
    }
  });

  it('the platform as declared synthesizes only references the library builds (and they resolve)', () => {
    const outdir = tempOutdir();
    new SecretStoreApp({ outdir }).define((a) => definePlatform(a, platformConfig)).synth();
    expect(templateProblems(outdir)).toEqual([]);
  });

  it(`every string field of every construct: refused, or written as a literal (seed ${random.seed})`, () => {
    const accepted: string[] = [];
    for (const field of FIELDS) {
      // A fixed value every free-text, claim and audience field takes, then random ones.
      for (let i = 0; i < 4; i++) {
        const value = i === 0 ? 'x${path.cwd}%{if}$${y}' : templateString(i === 1 ? '' : 'a');
        const outcome = synthesize(field, value);
        if ('refused' in outcome) continue;
        accepted.push(field[0]);
        expect({ field: field[0], value, problems: templateProblems(outcome.outdir) }).toEqual({ field: field[0], value, problems: [] });
      }
    }
    // Not vacuous: template text is accepted in the fields that take free text, claims and audiences.
    for (const f of ['CiJwtRole audiences', 'CiJwtRole boundClaims', 'CiSecret description', 'RegistryServiceAccount usedBy', 'CiJwtRole policy comment', 'authMounts.approle.description', 'people.clientId', 'people group binding']) {
      expect(accepted).toContain(f);
    }
  });

  it('the hostile bound claim of the finding is applied literally, and the access analysis reads it as written', () => {
    const outdir = tempOutdir();
    new SecretStoreApp({ outdir }).define((a) => definePlatform(a, { ...platformConfig, ciBoundClaims: { namespace_path: N39 } })).synth();
    expect(templateProblems(outdir)).toEqual([]);
    expect(literals(outdir)).toContain(N39);
    const raw = fs.readFileSync(path.join(outdir, 'stacks', 'ci-access', 'cdk.tf.json'), 'utf8');
    expect(raw).toContain(JSON.stringify('acme/$${"\\u002c\\u002a"}').slice(1, -1));
    const role = readStoreConfiguration(outdir).identities.find((i) => i.name === 'jwt/registry-ci');
    expect(role?.bindings.bound_claims).toEqual({ namespace_path: [N39] });
  });
});
