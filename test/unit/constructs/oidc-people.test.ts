import * as fs from 'fs';
import * as path from 'path';
import { Construct } from 'constructs';
import { Duration, KvPath } from '../../../lib';
import { Platform } from '../../../lib/platform/platform';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { PeopleConfig } from '../../../lib/platform/people-stack';
import { platformConfig } from '../../support/platform-config';
import { policyRules, resources, synthesisProblems, synthesizePlatform } from '../../support/synthesized-platform';
import { PEOPLE, withPeople } from '../../support/people-config';

const problemsOf = (config: PlatformConfig, change?: (p: Platform, app: Construct) => void): string[] => synthesisProblems(config, change);

const people = (change: Partial<PeopleConfig>): PlatformConfig => withPeople({ ...PEOPLE, ...change });

describe('People through single sign-on (spec §5.6): the OIDC method and one role per group', () => {
  const synthesized = synthesizePlatform(withPeople());
  const stack = synthesized.stacks.people;
  const backend = resources(stack, 'vault_jwt_auth_backend')[0];
  const roles = Object.fromEntries(resources(stack, 'vault_jwt_auth_backend_role').map((r) => [r.role_name, r]));
  const policies = Object.fromEntries(resources(stack, 'vault_policy').map((p) => [p.name, p.policy]));

  it('is a stack of its own, declared only when the configuration has people', () => {
    expect(Object.keys(synthesized.stacks)).toEqual(['app-roles', 'ci-access', 'people']);
    expect(Object.keys(synthesizePlatform(platformConfig).stacks)).toEqual(['app-roles', 'ci-access']);
  });

  it('mounts an OIDC method at oidc/ from the discovery URL and client id', () => {
    expect(backend).toMatchObject({
      path: 'oidc',
      type: 'oidc',
      oidc_discovery_url: PEOPLE.discoveryUrl,
      oidc_client_id: 'secretstore',
    });
  });

  it('never writes the client secret: a write-only attribute fed by an ephemeral, sensitive variable', () => {
    expect(backend).not.toHaveProperty('oidc_client_secret');
    expect(backend.oidc_client_secret_wo).toBe('${var.oidc_client_secret}');
    expect(backend.oidc_client_secret_wo_version).toBe(1);
    expect(stack.variable.oidc_client_secret).toMatchObject({ type: 'string', sensitive: true, ephemeral: true, nullable: false });
    expect(stack.variable.oidc_client_secret).not.toHaveProperty('default');
  });

  it('pins the vault provider to 5.7.0 or later, the first with oidc_client_secret_wo', () => {
    expect(stack.terraform.required_providers.vault.version).toBe('>= 5.7.0, < 6.0.0');
    expect(synthesized.stacks['ci-access'].terraform.required_providers.vault.version).toBe('>= 5.6.0, < 6.0.0');
  });

  it('binds each role to its group in the groups claim, exactly, with the UI and CLI redirect URIs', () => {
    expect(roles['platform-admins']).toMatchObject({
      backend: expect.stringMatching(/^\$\{vault_jwt_auth_backend\.oidc_backend_[0-9A-F]+\.path\}$/),
      role_type: 'oidc',
      groups_claim: 'groups',
      user_claim: 'sub',
      bound_claims: { groups: 'platform-admins' },
      bound_claims_type: 'string',
      bound_audiences: ['secretstore'],
      allowed_redirect_uris: ['https://vault.acme.example/ui/vault/auth/oidc/oidc/callback', 'http://localhost:8250/oidc/callback'],
      oidc_scopes: ['profile', 'email', 'groups'],
      token_policies: [expect.stringMatching(/^\$\{vault_policy\.group-platform-admins_policy_[0-9A-F]+\.name\}$/)],
    });
    expect(roles.developers.bound_claims).toEqual({ groups: 'developers' });
  });

  it('gives tokens short lifetimes by default: 1h, at most 8h renewals included', () => {
    expect(roles.developers).toMatchObject({ token_ttl: 3600, token_max_ttl: 28800, token_explicit_max_ttl: 28800, token_type: 'service' });
  });

  it('grants a group nothing of the platform unless it lists reads (a policy of comments only)', () => {
    expect(policyRules(policies.developers)).toEqual([]);
    expect(policies.developers).toContain('# grants nothing: this group of people reads no platform secret path');
    expect(policyRules(policies['platform-admins'])).toEqual([
      ['secret/data/team/runbooks/*', ['read']],
      ['secret/metadata/team/runbooks/*', ['list']],
    ]);
  });

  it('takes the groups claim, user claim, scopes, mount, lifetimes and redirect choice from the configuration', () => {
    const s = synthesizePlatform(
      people({
        path: 'sso',
        groupsClaim: 'roles',
        userClaim: 'email',
        scopes: ['profile'],
        cliRedirect: false,
        clientSecretVersion: 3,
        groups: { ops: { groups: ['ops', 'sre'], tokenTtl: Duration.minutes(30), tokenMaxTtl: Duration.hours(2) } },
      }),
    ).stacks.people;
    const role = resources(s, 'vault_jwt_auth_backend_role')[0];
    expect(role).toMatchObject({
      groups_claim: 'roles',
      user_claim: 'email',
      bound_claims: { roles: 'ops,sre' },
      oidc_scopes: ['profile'],
      allowed_redirect_uris: ['https://vault.acme.example/ui/vault/auth/sso/oidc/callback'],
      token_ttl: 1800,
      token_max_ttl: 7200,
    });
    expect(resources(s, 'vault_jwt_auth_backend')[0].oidc_client_secret_wo_version).toBe(3);
    expect(s.variable.sso_client_secret).toMatchObject({ ephemeral: true });
  });
});

describe('People: bad input is reported with construct, field, value and rule, all at once', () => {
  it('reports every problem of the method and of a group together', () => {
    expect(
      problemsOf(
        people({
          discoveryUrl: 'http://sso.acme.example',
          clientId: '',
          storeUrl: 'vault',
          groupsClaim: 'a b',
          scopes: ['openid'],
          clientSecretVersion: 0,
          groups: { 'Bad Name': { groups: [' admins'], tokenMaxTtl: Duration.hours(48), reads: [{ path: 'team/x', machinePathReason: 'x' }] } },
        }),
      ),
    ).toEqual([
      '[people] id = "group-Bad Name": must be letters, digits, ".", "_" and "-", at most 100 characters (it contains other characters): construct ids are written into policies, CI templates and reports',
      '[people/group-Bad Name] roleName = "Bad Name": must be lower-case letters, digits and inner hyphens; it contains upper case, white space',
      '[people/group-Bad Name] groups = " admins": must be a group name without leading or trailing spaces, control characters or "," (the store splits on it)',
      '[people/group-Bad Name] reads[0].machinePathReason = "x": must say why people read a machine\'s path (at least 10 characters; white space and invisible characters (zero-width, format characters) do not count)',
      '[people/group-Bad Name] tokenMaxTtl = "2d": must be at most 1d: a person\'s token left on a laptop stays usable that long; people log in again',
      expect.stringContaining('[people/oidc] discoveryUrl = "http://sso.acme.example": uses plain http to a host that is not this machine'),
      '[people/oidc] storeUrl = "vault": must be an http(s) URL of host, optional port and path (letters, digits, ".", "_", "~", "-"), without credentials, query, fragment, spaces or shell characters',
      '[people/oidc] clientId = "": must be a non-empty client id without spaces or control characters',
      '[people/oidc] groupsClaim = "a b": must be a claim name: letters, digits, "_", "-" and ":", not empty',
      '[people/oidc] scopes = "openid": the store always requests "openid": leave it out',
      '[people/oidc] clientSecretVersion = 0: must be a whole number >= 1: raise it to write a rotated secret',
    ]);
  });

  it('a machinePathReason of invisible characters is no reason: they do not count toward its 10 characters', () => {
    const RULE = 'must say why people read a machine\'s path (at least 10 characters; white space and invisible characters (zero-width, format characters) do not count)';
    const reason = (machinePathReason: string) =>
      problemsOf(people({ groups: { ops: { groups: ['ops'], reads: [{ path: 'registry/svc-orchestrator', machinePathReason }] } } }));
    // Zero-width space, joiner, non-joiner, BOM, soft hyphen, word joiner, a filler, spaces.
    expect(reason('\u200b\u200c\u200d\ufeff\u00ad\u2060\u3164   \u200b\u200b')).toEqual([
      `[people/group-ops] reads[0].machinePathReason = "\\u200b\\u200c\\u200d\\ufeff\\u00ad\\u2060\u3164   \\u200b\\u200b": ${RULE}`,
    ]);
    expect(reason('rotate\u200b\u200b\u200b\u200b')).toEqual([`[people/group-ops] reads[0].machinePathReason = "rotate\\u200b\\u200b\\u200b\\u200b": ${RULE}`]);
    // Accents and emoji sequences count once each, as people see them.
    expect(reason('r\u00e9otation \u{1F468}\u200d\u{1F469}')).toEqual([]);
    expect(reason('break-glass rotation')).toEqual([]);
  });

  it('a grant made in code is held to the same rule (SSI-R12 would otherwise take any text as a reason)', () => {
    const found = problemsOf(people({}), (p) =>
      p.people!.roles.developers.grantRead(KvPath.secret(p.ciAccess.settings.kvMount, 'registry/svc-orchestrator'), '\u200b'.repeat(12)),
    );
    expect(found).toEqual([expect.stringMatching(/^\[people\/group-developers\] machinePathReason = "(\\u200b){12}": must say why people read a machine's path/)]);
  });

  it('reports a people section of the wrong shape by its field, not a crash', () => {
    expect(problemsOf(people({ groups: 'admins' as never }))).toEqual(
      expect.arrayContaining([
        '[people] people.groups = "admins": must be an object of role names to groups ({ "platform-admins": { groups: ["platform-admins"] } })',
      ]),
    );
    expect(problemsOf({ ...platformConfig, people: 'sso' as never })).toEqual([
      '[ci-access] people = "sso": must be an object { discoveryUrl, clientId, storeUrl, groups, ... }, not text',
    ]);
  });

  it('reports a group field of the wrong type (a JSON configuration) by the construct that takes it', () => {
    expect(problemsOf(people({ groups: { ops: { groups: 'ops' as never } } }))).toEqual(
      expect.arrayContaining(['[people/group-ops] groups = "ops": must be a list of text, not text']),
    );
  });
});

describe('People: the synthesized output and the output directory never hold the client secret', () => {
  it('no file of the synthesis mentions a secret value given in the environment', () => {
    const secret = 'client-secret-value-4f1b9e';
    process.env.TF_VAR_oidc_client_secret = secret;
    try {
      const out = synthesizePlatform(withPeople());
      const files = (dir: string): string[] =>
        fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]));
      const all = files(out.outdir);
      expect(all.length).toBeGreaterThan(2);
      for (const file of all) expect(fs.readFileSync(file, 'utf8')).not.toContain(secret);
    } finally {
      delete process.env.TF_VAR_oidc_client_secret;
    }
  });
});
