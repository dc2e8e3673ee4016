import { AccessModel } from '../../../lib/access/access-model';
import { diffAccess } from '../../../lib/access/access-diff';
import { accessReport } from '../../../lib/access/access-report';
import { renderAccessReportMarkdown } from '../../../lib/access/access-report-markdown';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { whoCan } from '../../../lib/access/who-can';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { PeopleConfig } from '../../../lib/platform/people-stack';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';
import { PEOPLE, withPeople } from '../../support/people-config';

const parser = new PolicyParser();
const modelOf = async (people?: PeopleConfig) =>
  AccessModel.load(readStoreConfiguration(synthesizePlatform(people ? withPeople(people) : platformConfig).outdir), parser);

describe('People in the access analysis: identity oidc/<role>, bound by group', () => {
  let base: AccessModel;
  let head: AccessModel;
  beforeAll(async () => {
    base = await modelOf();
    head = await modelOf(PEOPLE);
  });

  it('reads each group role as an oidc identity with its group binding, redirect URIs and the client id', () => {
    const admins = head.get('oidc/platform-admins')!.identity;
    expect(admins).toMatchObject({ method: 'oidc', mount: 'oidc', role: 'platform-admins', stack: 'people', tokenPolicies: ['platform-admins'] });
    expect(admins.bindings).toMatchObject({
      role_type: 'oidc',
      bound_claims: { groups: ['platform-admins'] },
      groups_claim: 'groups',
      allowed_redirect_uris: ['http://localhost:8250/oidc/callback', 'https://vault.acme.example/ui/vault/auth/oidc/oidc/callback'],
      oidc_client_id: 'secretstore',
      oidc_discovery_url: PEOPLE.discoveryUrl,
      token_ttl: 3600,
      token_max_ttl: 28800,
    });
  });

  it('who-can names the group that reads its team path, and no person for a CI or application secret', () => {
    expect(whoCan(head, 'read', 'secret/data/team/runbooks/oncall').allowed.map((e) => e.identity)).toEqual(['oidc/platform-admins']);
    for (const p of ['secret/data/registry/svc-orchestrator', 'secret/data/acme/dev/orchestrator/database']) {
      expect(whoCan(head, 'read', p).allowed.map((e) => e.identity).filter((i) => i.startsWith('oidc/'))).toEqual([]);
    }
  });

  it('a group without reads gets no path beyond the built-in default policy', () => {
    const developers = head.get('oidc/developers')!;
    expect(developers.acl.rules.filter((r) => !head.isBuiltinDefaultOnly(r))).toEqual([]);
  });

  it('the access report says who logs in by group, and what people may do on the registry', () => {
    const md = renderAccessReportMarkdown(accessReport(head));
    expect(md).toContain('OIDC role (people, single sign-on) `platform-admins` on mount `oidc` (stack `people`');
    expect(md).toContain('People log in through single sign-on when their `groups` claim holds `platform-admins`.');
    expect(md).toContain('People reach the registry through the same single sign-on, with browse and download rights only');
    expect(md).toContain('Pushing is for `svc-orchestrator` and `svc-executor`, within their permission scopes');
    expect(md).toContain("This library manages the store (its logins, roles and policies), not the registry's own permissions");
  });

  it('access-diff flags a change that gives people a path they did not have, not one that gives them nothing', () => {
    const diff = diffAccess(base, head);
    expect(diff.added.map((i) => i.name)).toEqual(['oidc/developers', 'oidc/platform-admins']);
    expect(diff.flags.filter((f) => f.kind === 'people-gained')).toEqual([
      { kind: 'people-gained', identity: 'oidc/platform-admins', identities: ['oidc/platform-admins'], message: 'new people role gets `list` on `secret/metadata/team/runbooks/*`: a person can now use a path they could not' },
      { kind: 'people-gained', identity: 'oidc/platform-admins', identities: ['oidc/platform-admins'], message: 'new people role gets `read` on `secret/data/team/runbooks/*`: a person can now use a path they could not' },
    ]);
  });

  it('access-diff flags an existing group gaining a path, and a redirect URI added', async () => {
    const wider = await modelOf({
      ...PEOPLE,
      cliRedirect: true,
      storeUrl: 'https://vault2.acme.example',
      groups: { ...PEOPLE.groups, developers: { groups: ['developers'], reads: [{ path: 'team/dev', subtree: true }] } },
    });
    const flags = diffAccess(head, wider).flags.map((f) => `${f.kind} ${f.identity}: ${f.message}`);
    expect(flags).toEqual(
      expect.arrayContaining([
        'people-gained oidc/developers: gain `read` on `secret/data/team/dev/*`: a person can now use a path they could not',
        expect.stringMatching(/^binding-loosened oidc\/developers: `allowed_redirect_uris` .*vault2\.acme\.example/),
      ]),
    );
  });

  it('drift and adopt read the declared OIDC method and roles (the write-only secret is left out)', () => {
    const objects = readDeclaredObjects(synthesizePlatform(withPeople()).outdir, 'people');
    expect(objects.map((o) => `${o.kind} ${o.storePath}`)).toEqual(
      expect.arrayContaining(['jwt-auth-mount sys/auth/oidc', 'jwt-role auth/oidc/role/platform-admins', 'jwt-role auth/oidc/role/developers', 'policy sys/policies/acl/developers']),
    );
    const mount = objects.find((o) => o.kind === 'jwt-auth-mount')!;
    expect(mount.fields).toMatchObject({ type: 'oidc', oidc_client_id: 'secretstore' });
    expect(Object.keys(mount.fields).filter((k) => k.includes('secret'))).toEqual(['oidc_client_secret_wo_version']);
  });
});
