/**
 * The usage report's fix texts name a field the configuration has (issue 47): each never-used
 * grant of a synthesized platform names the `PlatformConfig` field that declares it, and following
 * the fix (that field changed, the platform synthesized again) takes exactly that grant; the
 * spec's own declarations, which no field removes, say so instead of naming a knob.
 */
import { AccessModel } from '../../../lib/access/access-model';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { grantDeclaration } from '../../../lib/usage/grant-declaration';
import { UsageAggregator, UsageReport } from '../../../lib/usage/usage-report';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';

const config: PlatformConfig = {
  ...platformConfig,
  accounts: { mirror: { permissions: ['rpm:read', 'raw:read'], usedBy: 'mirror sync jobs', consumers: ['mirror-sync'] } },
  applications: { 'billing-dev': { name: 'billing', environment: 'dev', secrets: { config: ['api_key'] } } },
};

/** The report of an empty log over a synthesis of `c`: every grant is never used. */
async function emptyReport(c: PlatformConfig): Promise<UsageReport> {
  const configuration = readStoreConfiguration(synthesizePlatform(c).outdir);
  return new UsageAggregator(await AccessModel.load(configuration), configuration).report({ lines: 0, responses: 0, malformed: [], malformedCount: 0 }, {});
}
const unused = (r: UsageReport, identity: string) => r.identities.find((u) => u.identity === identity)?.unused ?? [];

describe('fix texts of never-used grants, followed', () => {
  let before: UsageReport;
  beforeAll(async () => {
    before = await emptyReport(config);
  });

  it('a configured account: accounts.mirror.readByCi; set to false (its consumers dropped), the grant is gone and nothing else changes', async () => {
    const grant = unused(before, 'jwt/registry-ci').find((g) => g.rule === 'secret/data/registry/svc-mirror')!;
    expect(grant.declaredBy).toEqual(['ci-access/svc-mirror']);
    expect(grantDeclaration('ci-access/svc-mirror').field).toBe('accounts.mirror.readByCi');
    expect(grant.fix).toContain('set accounts.mirror.readByCi to false in the PlatformConfig and drop its consumers');
    // As the fix says (readByCi false with consumers left is refused by SSI-R8: the fix names both).
    const { consumers: _dropped, ...mirror } = config.accounts!.mirror;
    const after = await emptyReport({ ...config, accounts: { mirror: { ...mirror, readByCi: false } } });
    expect(unused(after, 'jwt/registry-ci').map((g) => g.rule)).toEqual(unused(before, 'jwt/registry-ci').map((g) => g.rule).filter((r) => r !== grant.rule));
  });

  it('a configured application: applications.billing-dev; removed, its identity and grant are gone', async () => {
    const [grant] = unused(before, 'approle/billing-dev');
    expect([grant.rule, grant.declaredBy]).toEqual(['secret/data/acme/dev/billing/*', ['app-roles/billing-dev']]);
    expect(grant.fix).toContain('remove applications.billing-dev from the PlatformConfig');
    const after = await emptyReport({ ...config, applications: {} });
    expect(after.identities.map((u) => u.identity)).toEqual(before.identities.map((u) => u.identity).filter((i) => i !== 'approle/billing-dev'));
  });

  it("the spec's own account, CI secret and application name no field (none exists to change)", () => {
    const spec = [
      ['jwt/registry-ci', 'ci-access/svc-executor'],
      ['jwt/registry-ci', 'ci-access/vulnmgmt'],
      ['approle/authentik-role', 'app-roles/identity-shared'],
    ];
    for (const [identity, declaredBy] of spec) {
      const grant = unused(before, identity).find((g) => g.declaredBy.includes(declaredBy))!;
      expect(grantDeclaration(declaredBy).field).toBeUndefined();
      expect(grant.fix).toContain('no PlatformConfig field removes it');
      expect(grant.fix).not.toMatch(/readByCi|application's paths/);
    }
  });

  it("a people group's read: people.groups.<name>.reads[<i>]", () => {
    expect(grantDeclaration('people/group-platform-admins/reads[0]')).toEqual({
      constructPath: 'people/group-platform-admins/reads[0]',
      field: 'people.groups.platform-admins.reads[0]',
      text: 'remove people.groups.platform-admins.reads[0] from the PlatformConfig',
      edit: { kind: 'remove-group-read', group: 'platform-admins', index: 0 },
    });
  });
});

describe("the configuration pipeline's roles", () => {
  it('a never-used rule names no field: their rules follow the stacks the pipeline runs', async () => {
    const r = await emptyReport({ ...config, configurationProject: { projectId: '42', localStateReason: 'a unit test: no pipeline runs' } as PlatformConfig['configurationProject'] });
    const pipeline = r.identities.filter((u) => /^ci-access\/pipeline-(apply|plan)\//.test(u.declaredAt ?? ''));
    expect(pipeline.map((u) => u.identity).sort()).toEqual(['jwt/secretstore-iac-pipeline', 'jwt/secretstore-iac-plan']);
    for (const u of pipeline) {
      expect(u.unused.length).toBeGreaterThan(0);
      for (const g of u.unused) {
        expect(g.fix).toContain("the configuration pipeline's rules are derived from the objects of the stacks it runs (docs/pipelines.md §9)");
        expect(g.fix).not.toMatch(/readByCi|application's paths/);
      }
    }
  });
});
