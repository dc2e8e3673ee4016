import * as fs from 'fs';
import * as path from 'path';
import { Construct } from 'constructs';
import { TerraformVariable } from 'cdktf';
import { ApproleAuthBackendRole } from '@cdktf/provider-vault/lib/approle-auth-backend-role';
import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { GenericSecret } from '@cdktf/provider-vault/lib/generic-secret';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import {
  AppRoleApplication,
  AppRoleAuth,
  AuthMountTune,
  CiJwtRole,
  CiLoginTemplate,
  CiSecret,
  Duration,
  JwtKeySource,
  KvMount,
  RegistryServiceAccount,
  SecretStoreApp,
  SecretStoreValidationError,
} from '../../../lib';
import { definePlatform, Platform } from '../../../lib/platform/platform';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { stackWithKvMount } from '../../support/kv-mount-stack';
import { withPeople } from '../../support/people-config';
import { synthesisProblems, tempOutdir } from '../../support/synthesized-platform';
import { userStack } from '../../support/user-stack';

// The bad-input catalogue: every case names the construct path, the field, the value and the rule,
// all problems are reported together, and a failed synthesis writes nothing.

/** Synthesizes the platform with a change and returns the problems (or [] when synthesis succeeded). */
const problemsOf = (change: (p: Platform, app: Construct) => void, config: PlatformConfig = platformConfig): string[] => synthesisProblems(config, change);

const withSettings = (settings: Partial<PlatformConfig['settings']>): PlatformConfig => ({
  ...platformConfig,
  settings: { ...platformConfig.settings, ...settings },
});

const app = (p: Platform, id: string, props: Partial<ConstructorParameters<typeof AppRoleApplication>[2]>) =>
  new AppRoleApplication(p.appRoles, id, { auth: p.appRoles.appRoleAuth, name: 'billing', environment: 'dev', ...props });

const account = (p: Platform, id: string, props: Partial<ConstructorParameters<typeof RegistryServiceAccount>[2]>) =>
  new RegistryServiceAccount(p.ciAccess, id, { name: 'helm', permissions: ['raw:read'], usedBy: 'charts', ...props });

const ciSecret = (p: Platform, id: string, props: Partial<ConstructorParameters<typeof CiSecret>[2]>) =>
  new CiSecret(p.ciAccess, id, {
    path: 'sonar/token',
    keys: ['token'],
    consumers: ['scan'],
    description: 'scan',
    readers: [p.ciAccess.registryCi],
    ...props,
  });

const URL_RULE =
  'must be an http(s) URL of host, optional port and path (letters, digits, ".", "_", "~", "-"), without credentials, query, fragment, spaces or shell characters';
const HOST_NAME_RULE =
  'must be a DNS host name: labels of letters, digits and inner hyphens separated by single dots, no scheme, port, placeholder, leading "-" or empty label';
const URL_CREDENTIALS_RULE =
  'must not hold credentials (user:password@): the URL is written into committed CI files, agent.hcl and the store\'s configuration; give credentials through the tools\' own variables';
const LAYOUT_RULE = 'output directories may not overlap each other, the stack directories (stacks/) or anything outside cdktf.out';
const PLAIN_HTTP_RULE =
  'uses plain http to a host that is not this machine, so anyone on the network can read and change the traffic: use https, or list the host in settings.insecureHttpHosts';
const FREE_TEXT_RULE =
  '(control characters, line separators and bidirectional overrides are refused: they change how comments and reports are read)';
const jwtRole = (p: Platform, props: Partial<ConstructorParameters<typeof CiJwtRole>[2]>) =>
  new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'other-ci', ...props }).policy.addRule('secret/data/a', ['read'], 'test');
const PIN_RULE =
  'must pin the organisation: bind namespace_id or project_id to exact IDs, or namespace_path or project_path to "acme", "acme/<path>" or "<exact path>/*" only; a glob such as "*" or "acme*" also matches other groups (acme-evil), whose jobs could then log in';

const ONE_APPROLE_ROLE = "both would be one role of auth/approle on the store, each apply overwriting the other's settings and policies";

const ONE_POLICY = 'both texts would be written to one store policy, each apply replacing the other, and every role holding it would get the last text written';
const READER_NAME_RULE =
  "is the name of the live-store reader's policy that docs/adoption.md has operators write by hand: it is reserved for LiveStoreReaderPolicy (readerPolicy), since another policy of that name overwrites the operator's reader policy, or is overwritten by it, at every apply; choose another name";
const HMAC_RULE =
  'a key listed here is written in clear to every audit device (keys that must stay HMAC-ed: secret_id, secret_id_accessor, role_id, jwt, id_token, code, state, client_nonce, auth_url, oidc_client_secret, client_token, token, accessor)';
const VISIBLE_NOTE = 'white space and invisible characters (zero-width, format characters) do not count';
const withTune = (mount: 'jwt' | 'approle', tune: AuthMountTune): PlatformConfig => ({ ...platformConfig, authMounts: { [mount]: { tune } } });

type Case = [string, (p: Platform, a: Construct) => void, PlatformConfig | undefined, string];

const cases: Case[] = [
  ['upper-case application name', (p) => app(p, 'x', { name: 'Billing' }), undefined,
    '[app-roles/x] name = "Billing": must be lower-case letters, digits and inner hyphens; it contains upper case'],
  ['space in an application name', (p) => app(p, 'x', { name: 'bill ing' }), undefined,
    '[app-roles/x] name = "bill ing": must be lower-case letters, digits and inner hyphens; it contains white space'],
  ['slash in an environment', (p) => app(p, 'x', { environment: 'dev/eu' }), undefined,
    '[app-roles/x] environment = "dev/eu": must be lower-case letters, digits and inner hyphens; it contains a slash'],
  ['".." in a role name', (p) => app(p, 'x', { roleName: 'a..b' }), undefined,
    '[app-roles/x] roleName = "a..b": must be lower-case letters, digits and inner hyphens; it contains ".."'],
  ['wildcard in an account name', (p) => account(p, 'x', { name: 'helm*' }), undefined,
    '[ci-access/x] name = "helm*": must be lower-case letters, digits and inner hyphens; it contains a wildcard (* or +)'],
  ['account name with the svc- prefix', (p) => account(p, 'x', { name: 'svc-helm' }), undefined,
    '[ci-access/x] name = "svc-helm": is the {name} of svc-{name}: drop the "svc-" prefix'],
  ['duplicate account name', (p) => account(p, 'x', { name: 'executor', permissions: ['pypi:read'] }), undefined,
    '[ci-access/x] SSI-R4 name = "svc-executor": is already declared by ci-access/svc-executor'],
  ['duplicate permission scope', (p) => account(p, 'x', { permissions: ['container-image:read'] }), undefined,
    '[ci-access/x] SSI-R3 permissions = ["container-image:read"]: same permission scope as svc-deployer (ci-access/svc-deployer): a new account is created only for a distinct scope'],
  ['unknown registry permission', (p) => account(p, 'x', { permissions: ['helm:write' as any] }), undefined,
    '[ci-access/x] permissions = "helm:write": unknown permission: use <format>:read or <format>:write with format one of container-image, rpm, raw, pypi'],
  ['duplicate application role name', (p) => app(p, 'x', { roleName: 'gitlab-role' }), undefined,
    `[app-roles/x/role] SSI-R1 roleName = "gitlab-role": is already declared by app-roles/sourcehost-shared/role: ${ONE_APPROLE_ROLE}`],
  ['two applications whose paths overlap', (p) => app(p, 'x', { name: 'orchestrator', environment: 'dev', roleName: 'orch2' }), undefined,
    '[app-roles/x] SSI-R5 readablePath = "secret/data/acme/dev/orchestrator/*": overlaps secret/data/acme/dev/orchestrator/* of orchestrator-dev (app-roles/orchestrator-dev): cross-application secret access is not permitted'],
  ['token_ttl above token_max_ttl', (p) => app(p, 'x', { tokenTtl: Duration.hours(25) }), undefined,
    '[app-roles/x] tokenTtl = "1d1h": must not exceed tokenMaxTtl (1d)'],
  ['renewal interval not shorter than the token TTL', (p) => app(p, 'x', { tokenTtl: Duration.minutes(30) }), undefined,
    '[app-roles/x] renewalInterval = "45m": must be positive and shorter than tokenTtl (30m), or the token expires before the agent renews it'],
  ['hand-written data/ in a logical path', (p) => ciSecret(p, 'x', { path: 'data/sonar/token' }), undefined,
    '[ci-access/x] path = "data/sonar/token": must not start with "data/": the KV v2 API path is derived from the logical path'],
  ['wildcard in a logical path', (p) => ciSecret(p, 'x', { path: 'sonar/*' }), undefined,
    '[ci-access/x] path = "sonar/*": must not contain ACL wildcards (* or +): declare a subtree instead'],
  ['duplicate CI secret path', (p) => ciSecret(p, 'x', { path: 'vulnmgmt/svc-orchestrator' }), undefined,
    '[ci-access/x] SSI-R4 path = "vulnmgmt/svc-orchestrator": is already declared by ci-access/vulnmgmt'],
  ['CI secret inside an application\'s paths', (p) => ciSecret(p, 'x', { path: 'acme/dev/orchestrator/ci-token' }), undefined,
    '[ci-access/x] SSI-R6 path = "acme/dev/orchestrator/ci-token": lies inside the paths of application orchestrator-dev (app-roles/orchestrator-dev): CI would read application secrets'],
  ['CI secret with consumers but no reader', (p) => ciSecret(p, 'x', { readers: [] }), undefined,
    '[ci-access/x] SSI-R8 readers = []: nobody is granted read, yet consumers scan need it: add readers (e.g. the registry-ci role) or drop the consumers'],
  ['registry account with consumers but no reader', (p) => account(p, 'x', { consumers: ['chart-publish'] }), undefined,
    '[ci-access/x] SSI-R8 readers = []: nobody is granted read, yet consumers chart-publish need it: add readers (e.g. the registry-ci role) or drop the consumers'],
  ['CI secret without consumers', (p) => ciSecret(p, 'x', { consumers: [] }), undefined,
    '[ci-access/x] consumers = []: must name at least one consuming job'],
  ['invalid secret key', (p) => ciSecret(p, 'x', { keys: ['api-key'] }), undefined,
    '[ci-access/x] keys = "api-key": must be letters, digits and "_", not starting with a digit'],
  ['empty audiences', (p) => new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'other-ci', audiences: [] }).policy.addRule('secret/data/a', ['read'], 'test'), undefined,
    '[ci-access/x] audiences = []: must not be empty: job tokens carry aud, and a role without audiences rejects them'],
  ['empty bound claims', (p) => new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'other-ci', boundClaims: {} }).policy.addRule('secret/data/a', ['read'], 'test'), undefined,
    '[ci-access/x] boundClaims = {}: must not be empty: without a bound claim any job of the CI instance can log in'],
  ['bound claim with no value', undefined as any, { ...platformConfig, ciBoundClaims: { project_id: [] } },
    '[ci-access/registry-ci] boundClaims.project_id = []: must hold at least one non-empty value'],
  ['a role that grants nothing', (p) => new CiJwtRole(p.ciAccess, 'x', { auth: p.ciAccess.jwtAuth, roleName: 'idle-ci' }), undefined,
    '[ci-access/x] policy = "idle-ci": grants nothing: an empty policy is never emitted; grant a path or remove the identity'],
  ['empty organisation', undefined as any, withSettings({ organisation: '' }),
    '[ci-access] settings.organisation = "": must not be empty'],
  ['empty CI URL', undefined as any, withSettings({ ciUrl: '' }),
    '[ci-access] settings.ciUrl = "": must not be empty: it is the JWT issuer and audience'],
  ['CI URL with a placeholder left in', undefined as any, withSettings({ ciUrl: '{ci_url}' }),
    `[ci-access] settings.ciUrl = "{ci_url}": ${URL_RULE}`],
  ['CI URL with a trailing slash', undefined as any, withSettings({ ciUrl: 'https://ci.example/' }),
    '[ci-access] settings.ciUrl = "https://ci.example/": must not end with "/": job tokens carry the URL without it as iss and aud'],
  ['registry host with a scheme', undefined as any, withSettings({ registryHost: 'https://reg' }),
    `[ci-access] settings.registryHost = "https://reg": ${HOST_NAME_RULE}`],
  ['invalid KV version', undefined as any, withSettings({ kvMount: new KvMount('secret', 3 as any) }),
    '[ci-access] settings.kvMount.version = 3: must be 1 or 2'],
  ['JWT key source without keys', undefined as any, { ...platformConfig, ciKeySource: JwtKeySource.publicKeys([]) },
    '[ci-access/jwt] keySource = []: must hold at least one PEM public key'],
  ['job timeout of zero', undefined as any, { ...platformConfig, ciJobTimeout: Duration.seconds(0) },
    '[ci-access/registry-ci] jobTimeout = "0s": must be a positive whole number of seconds'],
  // Issue 11: nothing a configuration says can widen access beyond what it declares.
  ['construct id that would end a policy comment', (p) => ciSecret(p, 'x\npath "sys*" {', {}), undefined,
    '[ci-access] id = "x\\npath \\"sys*\\" {": must be letters, digits, ".", "_" and "-", at most 100 characters (it contains a control character or line separator): construct ids are written into policies, CI templates and reports'],
  ['construct id with other characters', (p) => ciSecret(p, 'x y', {}), undefined,
    '[ci-access] id = "x y": must be letters, digits, ".", "_" and "-", at most 100 characters (it contains other characters): construct ids are written into policies, CI templates and reports'],
  ['description with a Unicode line separator', (p) => ciSecret(p, 'x', { description: 'scan\u2028key: value' }), undefined,
    `[ci-access/x] description = "scan\\u2028key: value": must be one line of printable text; it contains U+2028 ${FREE_TEXT_RULE}`],
  ['usedBy with NEL', (p) => account(p, 'x', { usedBy: 'charts\u0085x' }), undefined,
    `[ci-access/x] usedBy = "charts\\u0085x": must be one line of printable text; it contains U+0085 ${FREE_TEXT_RULE}`],
  ['usedBy with a line feed', (p) => account(p, 'x', { usedBy: 'charts\nx' }), undefined,
    `[ci-access/x] usedBy = "charts\\nx": must be one line of printable text; it contains U+000A ${FREE_TEXT_RULE}`],
  ['application role named default', (p) => app(p, 'x', { roleName: 'default' }), undefined,
    '[app-roles/x/policy] SSI-R9 name = "default": is a built-in policy of the store (default, response-wrapping, root): writing it would change what every token may do, or fail; choose another name'],
  ['CI role named root', (p) => jwtRole(p, { roleName: 'root' }), undefined,
    '[ci-access/x/policy] SSI-R9 name = "root": is a built-in policy of the store (default, response-wrapping, root): writing it would change what every token may do, or fail; choose another name'],
  ['role name differing only in case (the store lower-cases policy names)', (p) => app(p, 'x', { roleName: 'Orchestrator-dev' }), undefined,
    '[app-roles/x] roleName = "Orchestrator-dev": must be lower-case letters, digits and inner hyphens; it contains upper case'],
  ['AppRole mount at token', (p) => new AppRoleAuth(p.appRoles, 'x', { path: 'token' }), undefined,
    '[app-roles/x/backend] SSI-R9 path = "token": is reserved by the store for auth methods (cubbyhole, identity, token): mounting there fails or replaces what the store itself serves; choose another path'],
  ['AppRole mount at identity, store not given (either store\'s reserved names)', (p) => new AppRoleAuth(p.appRoles, 'x', { path: 'identity' }), undefined,
    '[app-roles/x/backend] SSI-R9 path = "identity": is reserved by the store for auth methods (cubbyhole, identity, token): mounting there fails or replaces what the store itself serves; choose another path'],
  ['AppRole mount at cubbyhole on OpenBao', (p) => new AppRoleAuth(p.appRoles, 'x', { path: 'cubbyhole' }), withSettings({ store: { kind: 'openbao' } }),
    '[app-roles/x/backend] SSI-R9 path = "cubbyhole": is reserved by the store for auth methods (cubbyhole, identity, token): mounting there fails or replaces what the store itself serves; choose another path'],
  ['AppRole mount at token on Vault', (p) => new AppRoleAuth(p.appRoles, 'x', { path: 'token' }), withSettings({ store: { kind: 'vault' } }),
    '[app-roles/x/backend] SSI-R9 path = "token": is reserved by the store for auth methods (token): mounting there fails or replaces what the store itself serves; choose another path'],
  ['the scan capability on Vault (Vault refuses the policy)', (p) => p.ciAccess.registryCi.policy.addRule('secret/metadata/x', ['scan'], 'test'), withSettings({ store: { kind: 'vault' } }),
    '[ci-access/registry-ci] policy.rules["secret/metadata/x"] = ["scan"]: names "scan", which HashiCorp Vault does not know: it refuses the whole policy with invalid capability "scan"; remove it, or set settings.store to the store you run'],
  ['the subscribe capability on OpenBao', (p) => app(p, 'x', {}).policy.addRule('sys/events/subscribe/x', ['read', 'subscribe'], 'test'), withSettings({ store: { kind: 'openbao' } }),
    '[app-roles/x] policy.rules["sys/events/subscribe/x"] = ["read","subscribe"]: names "subscribe", which OpenBao does not know: it refuses the whole policy with invalid capability "subscribe"; remove it, or set settings.store to the store you run'],
  ['an unknown store kind', undefined as any, withSettings({ store: { kind: 'consul' as any } }),
    '[ci-access] settings.store.kind = "consul": must be one of "openbao", "vault"'],
  ['a store version that is not major.minor.patch', undefined as any, withSettings({ store: { kind: 'vault', version: '1.21' } }),
    '[ci-access] settings.store.version = "1.21": must be a version "major.minor.patch" (2.4.0, 1.21.1)'],
  ['KV mount at sys', undefined as any, withSettings({ kvMount: new KvMount('sys', 2) }),
    '[ci-access] SSI-R9 settings.kvMount.path = "sys": is reserved by the store for secrets engines (audit, auth, cubbyhole, identity, sys): mounting there fails or replaces what the store itself serves; choose another path'],
  ['bound claim of only "*"', undefined as any, { ...platformConfig, ciBoundClaims: { namespace_path: '*' } },
    '[ci-access/registry-ci] SSI-R10 boundClaims.namespace_path = ["*"]: a value of only "*" matches every job of the CI instance: bind an exact value'],
  ['bound claims that do not pin the organisation', undefined as any, { ...platformConfig, ciBoundClaims: { namespace_path: '*' } },
    `[ci-access/registry-ci] SSI-R10 boundClaims = {"namespace_path":["*"]}: ${PIN_RULE}`],
  ['unanchored glob acme*', undefined as any, { ...platformConfig, ciBoundClaims: { namespace_path: 'acme*' } },
    `[ci-access/registry-ci] SSI-R10 boundClaims = {"namespace_path":["acme*"]}: ${PIN_RULE}`],
  ['empty claim name', undefined as any, { ...platformConfig, ciBoundClaims: { '': 'x', namespace_path: 'acme' } },
    '[ci-access/registry-ci] boundClaims[""] = "": claim name must be letters, digits and "_", not starting with a digit'],
  ['CI URL with a query', undefined as any, withSettings({ ciUrl: 'https://ci.example?x=1' }),
    `[ci-access] settings.ciUrl = "https://ci.example?x=1": ${URL_RULE}`],
  ['CI URL with shell characters', undefined as any, withSettings({ ciUrl: 'https://ci.example/$(id)' }),
    `[ci-access] settings.ciUrl = "https://ci.example/$(id)": ${URL_RULE}`],
  ['CI URL with credentials', undefined as any, withSettings({ ciUrl: 'https://u:p@ci.example' }),
    `[ci-access] settings.ciUrl = "https://u:p@ci.example": ${URL_CREDENTIALS_RULE}`],
  ['JWKS URL with a space', undefined as any, { ...platformConfig, ciKeySource: JwtKeySource.jwksUrl('https://ci.example/oauth keys') },
    `[ci-access/jwt] keySource.jwks_url = "https://ci.example/oauth keys": ${URL_RULE}`],
  ['negative secretIdNumUses', (p) => app(p, 'x', { secretIdNumUses: -1 }), undefined,
    '[app-roles/x] secretIdNumUses = -1: must be a whole number >= 0 (0: unlimited)'],
  ['CIDR that is not one', (p) => app(p, 'x', { secretIdBoundCidrs: ['10.0.0.0/33'] }), undefined,
    '[app-roles/x] secretIdBoundCidrs = "10.0.0.0/33": must be a CIDR block, an IPv4 or IPv6 address with a prefix length (10.0.0.0/8; one address is 10.1.2.3/32)'],
  ['token CIDR that is a word', (p) => jwtRole(p, { tokenBoundCidrs: ['office'] }), undefined,
    '[ci-access/x] tokenBoundCidrs = "office": must be a CIDR block, an IPv4 or IPv6 address with a prefix length (10.0.0.0/8; one address is 10.1.2.3/32)'],
  ['ten-year job timeout', undefined as any, { ...platformConfig, ciJobTimeout: Duration.hours(87600) },
    '[ci-access/registry-ci] jobTimeout = "3650d": must be at most 1d: the job\'s store token lives as long as the timeout, and a token leaked from a job stays usable that long'],
  ['token max TTL above the store\'s cap', (p) => app(p, 'x', { tokenMaxTtl: Duration.hours(1000) }), undefined,
    '[app-roles/x] tokenMaxTtl = "41d16h": must be at most 32d: the store caps tokens at its max_lease_ttl (768h by default) without saying so'],
  ['Duration.parse of text that is not a duration', (p) => app(p, 'x', { tokenTtl: Duration.parse('1 day') }), undefined,
    '[app-roles/x] tokenTtl = "1 day": is not a duration: use e.g. 45m, 12h, 1h30m or a number of seconds'],
  ['two constructs with the same id', (p) => { app(p, 'x', {}); app(p, 'x', { name: 'other' }); }, undefined,
    '[app-roles] id = "x": is already the id of another construct in this scope: construct ids are unique within their parent'],
  ['audience with a comma', (p) => jwtRole(p, { audiences: ['a,b'] }), undefined,
    '[ci-access/x] audiences = "a,b": must be a non-empty audience without spaces, commas or control characters'],
  ['user claim that is not a claim name', (p) => jwtRole(p, { userClaim: 'project path' }), undefined,
    '[ci-access/x] userClaim = "project path": must be a claim name: letters, digits and "_", not starting with a digit'],
  // Issue 19 §3: rules compare store API paths on either KV version; a v2 API prefix is refused on v1 too.
  ['secret/ declared KV v1, CI secret at data/<application prefix>/... (the v2 data path of the application\'s secret)',
    (p) => ciSecret(p, 'x', { path: 'data/acme/dev/orchestrator/database' }), withSettings({ kvMount: new KvMount('secret', 1) }),
    '[ci-access/x] path = "data/acme/dev/orchestrator/database": must not start with "data/", even on a KV v1 mount: "data" is a KV v2 API prefix, so if secret/ is (or becomes) KV v2 on the store, secret/data/acme/dev/orchestrator/database addresses the data of the secret "acme/dev/orchestrator/database" (the store applies its own KV version, not the declared one)'],
  ['secret/ declared KV v1, CI secret at data/<application prefix>/...: SSI-R6 compares store API paths',
    (p) => ciSecret(p, 'x', { path: 'data/acme/dev/orchestrator/database' }), withSettings({ kvMount: new KvMount('secret', 1) }),
    '[ci-access/x] SSI-R6 path = "data/acme/dev/orchestrator/database": lies inside the paths of application orchestrator-dev (app-roles/orchestrator-dev): CI would read application secrets (on the store both reach secret/data/acme/dev/orchestrator/database: the store applies each mount\'s own KV version and path, not the declared ones)'],
  ['KV v1 mount, CI secret at metadata/...', (p) => ciSecret(p, 'x', { path: 'metadata/sonar/token' }), withSettings({ kvMount: new KvMount('kv', 1) }),
    '[ci-access/x] path = "metadata/sonar/token": must not start with "metadata/", even on a KV v1 mount: "metadata" is a KV v2 API prefix, so if kv/ is (or becomes) KV v2 on the store, kv/metadata/sonar/token addresses the metadata of the secret "sonar/token" (the store applies its own KV version, not the declared one)'],
  ['KV v1 mount, CI secret at config (the v2 mount\'s configuration endpoint)', (p) => ciSecret(p, 'x', { path: 'config' }), withSettings({ kvMount: new KvMount('kv', 1) }),
    '[ci-access/x] path = "config": must not start with "config/", even on a KV v1 mount: "config" is a KV v2 API prefix, so if kv/ is (or becomes) KV v2 on the store, kv/config addresses the mount\'s configuration endpoint (the store applies its own KV version, not the declared one)'],
  ['KV v1 mount, organisation "data": application paths data/<env>/<app>/* would be v2 data paths',
    undefined as any, withSettings({ organisation: 'data', kvMount: new KvMount('secret', 1) }),
    '[app-roles/orchestrator-dev] readablePath = "data/dev/orchestrator": must not start with "data/", even on a KV v1 mount: "data" is a KV v2 API prefix, so if secret/ is (or becomes) KV v2 on the store, secret/data/dev/orchestrator addresses the data of the secret "dev/orchestrator" (the store applies its own KV version, not the declared one)'],
  ['CI secret on a KV mount declared at secret/data, inside the v2 mount secret/ of the applications',
    (_p, a) => new CiSecret(stackWithKvMount(a, 'nested', new KvMount('secret/data', 1)), 'x', { path: 'acme/dev/orchestrator/database', keys: ['token'], consumers: ['scan'], description: 'scan' }),
    undefined,
    '[nested/x] SSI-R6 path = "acme/dev/orchestrator/database": lies inside the paths of application orchestrator-dev (app-roles/orchestrator-dev): CI would read application secrets'],
  // Issue 19 §2: configuration values are checked at run time (JSON, YAML, casts).
  ['readByCi that is text ("no" is truthy)', undefined as any, { ...platformConfig, accounts: { mirror: { permissions: ['raw:read'], usedBy: 'mirror', readByCi: 'no' as any } } },
    '[ci-access] accounts.mirror.readByCi = "no": must be true or false, not text'],
  ['keys that are text, not a list', (p) => ciSecret(p, 'x', { keys: 'token' as any }), undefined,
    '[ci-access/x] keys = "token": must be a list of text, not text'],
  ['exitOnError that is HCL text', undefined as any, { ...platformConfig, agents: { exitOnError: 'true\n}\nx {' as any } },
    '[app-roles/agents] exitOnError = "true\\n}\\nx {": must be true or false, not text'],
  ['tokenType outside its enum', (p) => jwtRole(p, { tokenType: 'bogus' as any }), undefined,
    '[ci-access/x] tokenType = "bogus": must be one of "service", "batch"'],
  ['a number in a claim list', undefined as any, { ...platformConfig, ciBoundClaims: { namespace_path: ['acme', 5 as any] } },
    '[ci-access/registry-ci] boundClaims.namespace_path[1] = 5: must be text (a string), not a number'],
  ['null bound claims', undefined as any, { ...platformConfig, ciBoundClaims: null as any },
    '[ci-access/registry-ci] boundClaims = null: must be an object of claim names to text or lists of text, not null'],
  ['a numeric description', (p) => ciSecret(p, 'x', { description: 5 as any }), undefined,
    '[ci-access/x] description = 5: must be text (a string), not a number'],
  ['a proxy port of NaN', undefined as any, { ...platformConfig, agents: { proxyPort: NaN } },
    '[app-roles/agents] proxyPort = NaN: must be a finite number, not the number NaN'],
  ['a misspelt field', undefined as any, { ...platformConfig, accounts: { mirror: { permissions: ['raw:read'], usedBy: 'mirror', readbyCi: false } as any } },
    '[ci-access/svc-mirror] readbyCi = false: is not a field here: the fields are name, permissions, usedBy, consumers, readers, olderFormGrant'],
  ['__proto__ as an account name (JSON.parse)', undefined as any, { ...platformConfig, accounts: JSON.parse('{"__proto__": {"permissions": ["raw:read"], "usedBy": "x"}}') },
    '[ci-access/svc-__proto__] name = "__proto__": must be lower-case letters, digits and inner hyphens, starting and ending with a letter or digit'],
  ['__proto__ as a claim name (JSON.parse)', undefined as any, { ...platformConfig, ciBoundClaims: JSON.parse('{"__proto__": "x", "namespace_path": "acme"}') },
    '[ci-access/registry-ci] boundClaims["__proto__"] = "__proto__": is not a claim name: JavaScript treats "__proto__" as the object\'s prototype, so the claim would be dropped'],
  ['settings that are not an object', undefined as any, { ...platformConfig, settings: 'acme' as any },
    '[ci-access] settings = "acme": must be an object of platform settings { organisation, ciUrl, registryHost, ... }, not text'],
  // Issue 19 §4: artifact layout, environment-variable names, URLs.
  ['two templates writing one file', (p) => new CiLoginTemplate(p.ciAccess, 'x', { role: p.ciAccess.registryCi }), undefined,
    `[ci-access/x] artifact path = "ci/secretstore-ci.gitlab-ci.yml": is also written by ci-access/ci-template: two constructs write one file; ${LAYOUT_RULE}`],
  ['an output directory that is a generated file', undefined as any, { ...platformConfig, agents: { outputDirectory: 'ci/secretstore-ci.gitlab-ci.yml' } },
    `[app-roles/agents] outputDirectory = "ci/secretstore-ci.gitlab-ci.yml": overlaps ci/secretstore-ci.gitlab-ci.yml, written by ci-access/ci-template: ${LAYOUT_RULE}`],
  ['an output directory inside a stack directory', undefined as any, { ...platformConfig, agents: { outputDirectory: 'stacks/ci-access' } },
    `[app-roles/agents] outputDirectory = "stacks/ci-access": lies in stacks/, the stacks' working directories, whose files every later synthesis keeps: ${LAYOUT_RULE}`],
  ['an output directory shared with another template', undefined as any, { ...platformConfig, agents: { outputDirectory: 'e2e' } },
    `[app-roles/agents] outputDirectory = "e2e": overlaps e2e/.gitignore, written by ci-access/e2e-template: ${LAYOUT_RULE}`],
  ['a CI export that becomes LD_PRELOAD', (p) => ciSecret(p, 'ld', { keys: ['preload'] }), undefined,
    '[ci-access/ld] SSI-R11 keys = "preload": becomes the environment variable LD_PRELOAD in the CI job .secretstore-scan; the dynamic loader reads it: it loads code into every process started after it is set (LD_*): a secret may not set it (docs/boundaries.md §4); rename the key, or set variablePrefixes of the CI template'],
  ['an agent env key that becomes BASH_ENV', (p) => app(p, 'x', { secrets: { db: ['bash_env'] } }), undefined,
    '[app-roles/x] SSI-R11 secrets["db"].keys = "bash_env": becomes the environment variable BASH_ENV in the agent\'s env file of billing-dev; the shell reads it: it runs commands, changes how words and commands are found, or where the shell reads its start-up files: a secret may not set it (docs/boundaries.md §4); rename the key'],
  ['a store address with credentials', undefined as any, { ...platformConfig, agents: { storeAddress: 'https://agent:s3cret@store.acme.example:8200' } },
    `[app-roles/agents] storeAddress = "https://agent:s3cret@store.acme.example:8200": ${URL_CREDENTIALS_RULE}`],
  ['a plain-http JWKS URL', undefined as any, { ...platformConfig, ciKeySource: JwtKeySource.jwksUrl('http://gitlab.acme.example/oauth/discovery/keys') },
    `[ci-access/jwt] keySource.jwks_url = "http://gitlab.acme.example/oauth/discovery/keys": ${PLAIN_HTTP_RULE}`],
  ['a plain-http e2e target', undefined as any, { ...platformConfig, e2eTests: { ciBaseUrl: 'http://10.0.0.5:3000' } },
    `[ci-access/e2e-template] ciBaseUrl = "http://10.0.0.5:3000": ${PLAIN_HTTP_RULE}`],
  ['registry host "--help"', undefined as any, withSettings({ registryHost: '--help' }),
    `[ci-access] settings.registryHost = "--help": ${HOST_NAME_RULE}`],
  ['registry host ".."', undefined as any, withSettings({ registryHost: '..' }),
    `[ci-access] settings.registryHost = "..": ${HOST_NAME_RULE}`],
  // Issue 16 and 20: sharding and the agents' API proxy.
  ['hash sharding without a shard count', undefined as any, { ...platformConfig, applicationSharding: { by: 'hash' } },
    '[app-roles] sharding.shards = undefined: is required with by "hash": the number of hash shards, 1 to 100'],
  ['more hash shards than two digits name', undefined as any, { ...platformConfig, applicationSharding: { by: 'hash', shards: 500 } },
    '[app-roles] sharding.shards = 500: must be a whole number from 1 to 100 (shard numbers are two digits)'],
  ['a sharding mode that does not exist', undefined as any, { ...platformConfig, applicationSharding: { by: 'region' as any } },
    '[app-roles] sharding.by = "region": must be one of "none", "environment", "hash", "environment-hash"'],
  ['an application stack that is not a stack name', (p) => p.appRoles.addApplication('billing-dev', { name: 'billing', environment: 'dev', stack: 'Payments!' }), undefined,
    '[app-roles] applications["billing-dev"].stack = "Payments!": must be lower-case letters, digits and inner hyphens; it contains upper case'],
  ['an API proxy mode that does not exist', undefined as any, { ...platformConfig, agents: { apiProxy: 'sidecar' as any } },
    '[app-roles/agents] apiProxy = "sidecar": must be one of "agent", "proxy"'],
  // Issue 26: names compared as the store compares them, across every producer and stack; every store resource catalogued.
  ['the reader policy named registry-ci (the CI role\'s policy)', undefined as any, { ...platformConfig, readerPolicy: { name: 'registry-ci' } },
    `[ci-access/reader-policy/policy] SSI-R2 name = "registry-ci": is already declared by ci-access/registry-ci/policy: ${ONE_POLICY}`],
  ['the reader policy named like an application\'s policy', undefined as any, { ...platformConfig, readerPolicy: { name: 'orchestrator-dev' } },
    `[app-roles/orchestrator-dev/policy] SSI-R2 name = "orchestrator-dev": is already declared by ci-access/reader-policy/policy: ${ONE_POLICY}`],
  ['the reader policy named like the pipeline role\'s policy', undefined as any, { ...platformConfig, readerPolicy: { name: 'secretstore-iac-plan' }, configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } },
    `[ci-access/pipeline-plan/policy] SSI-R2 name = "secretstore-iac-plan": is already declared by ci-access/reader-policy/policy: ${ONE_POLICY}`],
  ['the reader policy named like a people group\'s role', undefined as any, { ...withPeople(), readerPolicy: { name: 'developers' } },
    `[people/group-developers/policy] SSI-R2 name = "developers": is already declared by ci-access/reader-policy/policy: ${ONE_POLICY}`],
  ['a raw vault_policy Registry-CI in a user stack', (_p, a) => void new Policy(userStack(a), 'policy', { name: 'Registry-CI', policy: '' }), undefined,
    `[user/policy] SSI-R2 name = "Registry-CI": is "registry-ci" on the store (policy names are one name space for the whole store, trimmed and lower-cased), already declared by ci-access/registry-ci/policy as "registry-ci": ${ONE_POLICY}`],
  ['a raw AppRole role Billing-dev beside the application billing-dev', (p, a) => { app(p, 'billing-dev', {}); new ApproleAuthBackendRole(userStack(a), 'role', { backend: 'approle', roleName: 'Billing-dev' }); }, undefined,
    `[user/role] SSI-R1 roleName = "Billing-dev": is "billing-dev" on the store (AppRole role names are lower-cased by the store, unique within their mount), already declared by app-roles/billing-dev/role as "billing-dev": ${ONE_APPROLE_ROLE}`],
  ['a raw auth mount at the JWT method\'s path', (_p, a) => void new AuthBackend(userStack(a), 'mount', { type: 'userpass', path: 'jwt' }), undefined,
    '[user/mount] SSI-R7 path = "jwt": is already declared by ci-access/jwt/backend: the store mounts one auth method per path: the second mount fails at apply, or the stacks fight over one method and its roles'],
  ['a raw vault_policy named " Default "', (_p, a) => void new Policy(userStack(a), 'policy', { name: ' Default ', policy: '' }), undefined,
    '[user/policy] SSI-R9 name = " Default ": is "default" on the store (policy names are trimmed and lower-cased), which is a built-in policy of the store (default, response-wrapping, root): writing it would change what every token may do, or fail; choose another name'],
  ['a CI role taking the reader policy\'s documented name', (p) => jwtRole(p, { roleName: 'secretstore-iac-reader' }), undefined,
    `[ci-access/x/policy] SSI-R9 name = "secretstore-iac-reader": ${READER_NAME_RULE}`],
  ['a raw vault_generic_secret in a user stack', (_p, a) => void new GenericSecret(userStack(a), 'secret', { path: 'secret/x', dataJson: '{}' }), undefined,
    '[user/secret] SSI-R14 resource type = "vault_generic_secret": has no entry in the catalogue of store objects, so no name check, pipeline grant or live-store reader covers it (it could overwrite an object another declaration writes, unnoticed); add an entry for it in lib/catalogue/ (one file per kind, listed in store-object-catalogue.ts), or declare the object with a resource type the catalogue has'],
  ['a store namespace the stores reserve', undefined as any, { ...platformConfig, settings: { ...platformConfig.settings, namespace: 'sys' } },
    '[ci-access] settings.namespace = "sys": "sys" is reserved by the store (root, sys, audit, auth, cubbyhole, identity) and cannot name a namespace'],
  ['an application entry that is not an object', undefined as any, { ...platformConfig, applications: { 'billing-dev': 'billing' as any } },
    '[ci-access] applications["billing-dev"] = "billing": must be an object of the application\'s properties, not text'],
  // Issue 26: mount settings that break the mission; .localhost; invisible characters.
  ['Secret IDs in clear in the audit log', undefined as any, withTune('approle', { auditNonHmacResponseKeys: ['secret_id'] }),
    `[app-roles/approle] tune.auditNonHmacResponseKeys[0] = "secret_id": must stay HMAC-ed in the audit log: it is an AppRole Secret ID, the secret half of a login (login and secret-id lookup requests, secret-id responses); ${HMAC_RULE}`],
  ['a job token in clear in the audit log (any case)', undefined as any, withTune('jwt', { auditNonHmacRequestKeys: ['role', 'JWT'] }),
    `[ci-access/jwt] tune.auditNonHmacRequestKeys[1] = "JWT": must stay HMAC-ed in the audit log: it is a CI job token (JWT login requests), valid for the CI system's other relying parties until it expires; ${HMAC_RULE}`],
  ['batch tokens on the AppRole mount, whose agents renew', undefined as any, withTune('approle', { tokenType: 'batch' }),
    '[app-roles/approle] tune.tokenType = "batch": overrides the token type the roles of the mount declare: the store would issue batch tokens to orchestrator-dev (app-roles/orchestrator-dev), authentik-role (app-roles/identity-shared), gitlab-role (app-roles/sourcehost-shared) and 1 more, which declare "service": batch tokens cannot be renewed, and the agents renew theirs every 45m (renew-self), so each application\'s token would end at its first TTL; leave tokenType out, or use "default-batch", which only applies to roles that declare none'],
  ['batch tokens on the JWT mount over service roles', undefined as any, withTune('jwt', { tokenType: 'batch' }),
    '[ci-access/jwt] tune.tokenType = "batch": overrides the token type the roles of the mount declare: the store would issue batch tokens to registry-ci (ci-access/registry-ci), secretstore-iac-pipeline (ci-access/pipeline-apply), secretstore-iac-plan (ci-access/pipeline-plan), which declare "service"; leave tokenType out, or use "default-batch", which only applies to roles that declare none'],
  ['a default lease TTL above the maximum', undefined as any, withTune('approle', { defaultLeaseTtl: Duration.hours(2), maxLeaseTtl: Duration.hours(1) }),
    '[app-roles/approle] tune.defaultLeaseTtl = "2h": must not exceed tune.maxLeaseTtl (1h): the store refuses a mount whose default lease TTL is above its maximum, so the apply would fail'],
  ['a misspelt authMounts field', undefined as any, { ...platformConfig, authMounts: { approle: { descripton: 'agents' } as any } },
    '[ci-access] authMounts.approle.descripton = "agents": is not a field here: the fields are local, description, tune'],
  ['an auth mount that does not exist', undefined as any, { ...platformConfig, authMounts: { oidc: {} } as any },
    '[ci-access] authMounts.oidc = {}: is not a field here: the fields are jwt, approle'],
  ['a misspelt tune field', undefined as any, withTune('approle', { tokentype: 'batch' } as any),
    '[app-roles/approle] tune.tokentype = "batch": is not a field here: the fields are defaultLeaseTtl, maxLeaseTtl, listingVisibility, tokenType, auditNonHmacRequestKeys, auditNonHmacResponseKeys'],
  ['a newline in a mount description', undefined as any, { ...platformConfig, authMounts: { jwt: { description: 'CI\nx' } } },
    `[ci-access/jwt] description = "CI\\nx": must be one line of printable text; it contains U+000A ${FREE_TEXT_RULE}`],
  ['http://sso.localhost/ is not loopback', undefined as any, { ...platformConfig, ciKeySource: JwtKeySource.oidcDiscovery('http://sso.localhost') },
    `[ci-access/jwt] keySource.oidc_discovery_url = "http://sso.localhost": ${PLAIN_HTTP_RULE}`],
  ['zero-width characters are not a description', (p) => ciSecret(p, 'x', { description: '\u200b\u200c\u200d\ufeff' }), undefined,
    `[ci-access/x] description = "\\u200b\\u200c\\u200d\\ufeff": must say what the secret is for (${VISIBLE_NOTE})`],
  ['white space and a BOM do not say who uses an account', (p) => account(p, 'x', { usedBy: ' \ufeff ' }), undefined,
    `[ci-access/x] usedBy = " \\ufeff ": must say who uses the account (${VISIBLE_NOTE})`],
  // Issue 26: a stack's input variables, which the configuration pipeline passes from CI/CD variables.
  ['a stack input variable that is not ephemeral, with the configuration pipeline', (p) => new TerraformVariable(p.appRoles, 'region', { type: 'string' }), undefined,
    '[ci-access/pipeline] stacks.app-roles.variables.region = "app-roles/region": must be ephemeral (addOverride("ephemeral", true)): the pipeline keeps every saved plan as a job artifact, and the engine writes the value of a variable that is not ephemeral into the plan file'],
  ['a stack input variable whose name is no CI/CD variable key', (p) => new TerraformVariable(p.appRoles, 'api-key', { type: 'string' }).addOverride('ephemeral', true), undefined,
    '[ci-access/pipeline] stacks.app-roles.variables.api-key = "app-roles/api-key": must be named with letters, digits and "_": the pipeline passes it from the CI/CD variable TF_VAR_<name>, and a CI/CD variable key allows no other character'],
];

describe('Bad input: each problem names the construct, field, value and rule', () => {
  it('the catalogue has at least 20 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
  });

  it.each(cases)('%s', (_title, change, config, expected) => {
    expect(problemsOf(change ?? (() => undefined), config)).toContain(expected);
  });
});

describe('settings.store: what each store accepts (docs/stores.md)', () => {
  it('HashiCorp Vault accepts auth mounts at identity and cubbyhole, so a Vault target synthesizes them', () => {
    const vault = withSettings({ store: { kind: 'vault', version: '1.21.1' } });
    expect(problemsOf((p) => new AppRoleAuth(p.appRoles, 'x', { path: 'identity' }), vault)).toEqual([]);
    expect(problemsOf((p) => new AppRoleAuth(p.appRoles, 'y', { path: 'cubbyhole' }), vault)).toEqual([]);
  });

  it('scan is accepted on OpenBao, subscribe and recover on Vault', () => {
    expect(problemsOf((p) => p.ciAccess.registryCi.policy.addRule('secret/metadata/x', ['scan'], 'test'), withSettings({ store: { kind: 'openbao' } }))).toEqual([]);
    expect(
      problemsOf((p) => p.ciAccess.registryCi.policy.addRule('sys/events/subscribe/x', ['read', 'subscribe', 'recover'], 'test'), withSettings({ store: { kind: 'vault' } })),
    ).toEqual([]);
  });
});

describe('All problems are reported together', () => {
  it('three unrelated mistakes in two stacks give three problems in one error', () => {
    const problems = problemsOf((p) => {
      app(p, 'a', { name: 'Billing' });
      account(p, 'b', { permissions: ['container-image:read'] });
      ciSecret(p, 'c', { path: 'data/x' });
    });
    expect(problems).toHaveLength(3);
    expect(problems.map((m) => m.split(']')[0] + ']')).toEqual(['[app-roles/a]', '[ci-access/b]', '[ci-access/c]']);
  });

  it('the error message lists every problem and says nothing was written', () => {
    const outdir = tempOutdir();
    const a = new SecretStoreApp({ outdir });
    definePlatform(a, withSettings({ organisation: '', ciUrl: '' }));
    expect(() => a.synth()).toThrow(
      /secretstore-iac: \d+ problems found; nothing was written:\n {2}\[app-roles\] settings\.organisation = ""/,
    );
  });

  it('two constructs with one id and Duration.parse("1 day") end in one report, no stack trace, no staging directory', () => {
    const outdir = tempOutdir();
    const a = new SecretStoreApp({ outdir }).define((x) => {
      const p = definePlatform(x, platformConfig);
      app(p, 'x', { tokenTtl: Duration.parse('1 day') });
      app(p, 'x', { name: 'other' });
    });
    let error: unknown;
    try {
      a.synth();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SecretStoreValidationError);
    expect((error as Error).message).toBe(
      'secretstore-iac: 2 problems found; nothing was written:\n' +
        '  [app-roles] id = "x": is already the id of another construct in this scope: construct ids are unique within their parent\n' +
        '  [app-roles/x] tokenTtl = "1 day": is not a duration: use e.g. 45m, 12h, 1h30m or a number of seconds',
    );
    expect(fs.readdirSync(path.dirname(outdir))).toEqual([]);
  });

  it('an app that is declared but never synthesized leaves no staging directory', () => {
    const outdir = tempOutdir();
    new SecretStoreApp({ outdir }).define((x) => definePlatform(x, platformConfig));
    expect(fs.readdirSync(path.dirname(outdir))).toEqual([]);
  });

  it('the platform as configured has no problem', () => {
    expect(problemsOf(() => undefined)).toEqual([]);
  });
});

describe('Own-property maps: any valid name works', () => {
  it.each(['constructor', 'valueof', 'tostring', 'hasownproperty'])('an account named %s synthesizes, readable by CI', (name) => {
    const config = { ...platformConfig, accounts: { [name]: { permissions: ['raw:read' as const], usedBy: 'mirror', consumers: ['mirror-sync'] } } };
    expect(problemsOf(() => undefined, config)).toEqual([]);
    const p = definePlatform(new SecretStoreApp({ outdir: tempOutdir() }), config);
    expect(Object.keys(p.ciAccess.accounts)).toContain(name);
    expect(p.ciAccess.accounts[name].secret.grants.map((g) => g.identity)).toEqual(['jwt/registry-ci']);
  });

  it('the spec accounts are found only by their own names: "constructor" is not one of them', () => {
    const problems = problemsOf(() => undefined, { ...platformConfig, accounts: { executor: { permissions: ['pypi:read'], usedBy: 'x' } } });
    expect(problems).toContain('[ci-access] accounts.executor = "executor": is declared by the stack already (ci-access/svc-executor): choose another name');
  });

  it('readByCi: "no" grants nothing while the problem stops the synthesis', () => {
    const p = definePlatform(new SecretStoreApp({ outdir: tempOutdir() }), {
      ...platformConfig,
      accounts: { mirror: { permissions: ['raw:read'], usedBy: 'mirror', readByCi: 'no' as any } },
    });
    expect(p.ciAccess.accounts.mirror.secret.grants).toEqual([]);
  });
});

describe('Plain http is refused unless the host is loopback or listed in settings.insecureHttpHosts', () => {
  const jwks = (url: string, insecureHttpHosts?: string[]) =>
    problemsOf(() => undefined, {
      ...withSettings({ insecureHttpHosts }),
      ciKeySource: JwtKeySource.jwksUrl(url),
    }).filter((m) => m.includes('keySource'));

  it('a listed lab host may be reached over http', () => {
    expect(jwks('http://gitlab.lab.example/keys', ['GITLAB.lab.example'])).toEqual([]);
  });

  it('loopback needs no option', () => {
    expect(jwks('http://127.0.0.1:8080/keys')).toEqual([]);
    expect(jwks('http://localhost/keys')).toEqual([]);
  });

  it('another host is refused although one host is listed', () => {
    expect(jwks('http://gitlab.acme.example/keys', ['gitlab.lab.example'])).toHaveLength(1);
  });

  it('the e2e target may stay a CI/CD variable reference', () => {
    expect(problemsOf(() => undefined, { ...platformConfig, e2eTests: { ciBaseUrl: '${DEV_ENVIRONMENT_URL}' } })).toEqual([]);
  });
});
