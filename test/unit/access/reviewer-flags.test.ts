import * as fs from 'fs';
import * as path from 'path';
import { AccessModel } from '../../../lib/access/access-model';
import { AccessDiff, diffAccess } from '../../../lib/access/access-diff';
import { renderAccessDiffMarkdown } from '../../../lib/access/access-diff-markdown';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { liveStoreConfiguration } from '../../../lib/reconcile/live-store-reader';
import { readDeclaredObjects } from '../../../lib/reconcile/declared-object';
import { appliedLiveStore } from '../../support/applied-live-store';
import { Duration } from '../../../lib';
import { PeopleConfig } from '../../../lib/platform/people-stack';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig } from '../../support/platform-config';
import { synthesizePlatform } from '../../support/synthesized-platform';
import { PEOPLE, withPeople } from '../../support/people-config';

// Issue 28: the risk flags say what a reviewer needs. Each fixture configuration is synthesized
// both ways through the library (base and head) and compared as `access-diff` compares them.

const parser = new PolicyParser();
const synthesized = (config: PlatformConfig) => synthesizePlatform(config);
const modelOf = async (config: PlatformConfig) => AccessModel.load(readStoreConfiguration(synthesized(config).outdir), parser);
const diff = async (base: PlatformConfig, head: PlatformConfig): Promise<AccessDiff> => diffAccess(await modelOf(base), await modelOf(head));
const markdownFlags = (d: AccessDiff) => renderAccessDiffMarkdown(d, { base: 'main', head: 'feature' }).split('\n').filter((l) => l.startsWith('- **'));

const ROTATION = 'break-glass rotation of the push account by the registry owners';
/** People who read a registry account's credentials, a CI secret and an application's paths, each with a reason. */
const withMachineReads = (reason = ROTATION): PlatformConfig =>
  withPeople({
    ...PEOPLE,
    groups: {
      ...PEOPLE.groups,
      'registry-owners': {
        groups: ['registry-owners'],
        reads: [
          { path: 'registry/svc-orchestrator', machinePathReason: reason },
          { path: 'codequality/svc-orchestrator', machinePathReason: 'the quality team checks the scanner token by hand' },
          { path: 'acme/dev/orchestrator', subtree: true, machinePathReason: 'on-call debugging of the dev orchestrator' },
        ],
      },
    },
  });

describe('"people gain a path" says the kind of machine path and the stated reason', () => {
  let d: AccessDiff;
  beforeAll(async () => {
    d = await diff(withPeople(), withMachineReads());
  });

  it('a registry account\'s credentials: the CI registry credential of svc-orchestrator, with the machinePathReason', () => {
    const flag = d.flags.find((f) => f.kind === 'people-gained' && f.message.includes('registry/svc-orchestrator'))!;
    expect(flag).toEqual({
      kind: 'people-gained',
      identity: 'oidc/registry-owners',
      identities: ['oidc/registry-owners'],
      message:
        'new people role gets `read` on `secret/data/registry/svc-orchestrator`: a person can now use a path they could not; ' +
        'it is the CI registry credential of `svc-orchestrator` (`secret/data/registry/svc-orchestrator`, ci-access/svc-orchestrator); ' +
        `stated reason (machinePathReason): "${ROTATION}"`,
      machinePaths: [{ kind: 'ci-registry-credential', owner: 'svc-orchestrator', path: 'secret/data/registry/svc-orchestrator', declaredAt: 'ci-access/svc-orchestrator' }],
      reason: ROTATION,
    });
  });

  it('a CI secret and an application\'s paths are named as such', () => {
    const messages = d.flags.filter((f) => f.kind === 'people-gained').map((f) => f.message);
    expect(messages).toContainEqual(
      expect.stringContaining(
        'on `secret/data/codequality/svc-orchestrator`: a person can now use a path they could not; it is the CI secret `codequality/svc-orchestrator` ' +
          '(`secret/data/codequality/svc-orchestrator`, ci-access/codequality); stated reason (machinePathReason): "the quality team checks the scanner token by hand"',
      ),
    );
    expect(messages).toContainEqual(
      expect.stringContaining(
        'on `secret/data/acme/dev/orchestrator/*`: a person can now use a path they could not; it is an application secret of `orchestrator-dev` ' +
          '(`secret/data/acme/dev/orchestrator/*`, app-roles/orchestrator-dev); stated reason (machinePathReason): "on-call debugging of the dev orchestrator"',
      ),
    );
    // The UI listing granted with the subtree carries the same reason.
    expect(d.flags.find((f) => f.message.startsWith('new people role gets `list` on `secret/metadata/acme/dev/orchestrator/*`'))?.reason).toBe('on-call debugging of the dev orchestrator');
  });

  it('a people path that is no machine\'s has neither kind nor reason', async () => {
    const team = (await diff(platformConfig, withPeople())).flags.filter((f) => f.message.includes('team/runbooks'));
    expect(team).toHaveLength(2);
    for (const f of team) {
      expect(f.message).toMatch(/a person can now use a path they could not$/);
      expect(f.machinePaths).toBeUndefined();
      expect(f.reason).toBeUndefined();
    }
  });

  it('the Markdown flag line carries the kind and the reason', () => {
    expect(markdownFlags(d)).toContainEqual(
      '- **people gain a path**, `oidc/registry-owners`: new people role gets `read` on `secret/data/registry/svc-orchestrator`: a person can now use a path they could not; ' +
        `it is the CI registry credential of \`svc-orchestrator\` (\`secret/data/registry/svc-orchestrator\`, ci-access/svc-orchestrator); stated reason (machinePathReason): "${ROTATION}"`,
    );
  });

  it('the reason travels in the people stack\'s metadata record (written as a Terraform literal), only when one is given', async () => {
    const tricky = 'rotate ${var.x} and %{ if } by hand, "quoted"';
    const out = synthesized(withMachineReads(tricky));
    const record = out.stacks.people['//'].metadata['secretstore-iac-machine-paths'];
    expect(record['oidc/registry-owners']['secret/data/registry/svc-orchestrator'].reason).toBe('rotate $${var.x} and %%{ if } by hand, "quoted"');
    const flag = diffAccess(await modelOf(withPeople()), await AccessModel.load(readStoreConfiguration(out.outdir), parser)).flags.find((f) => f.message.includes('registry/svc-orchestrator'))!;
    expect(flag.reason).toBe(tricky);
    // No reason, no record: the outputs of configurations without one are unchanged.
    for (const stack of Object.values(synthesized(withPeople()).stacks)) expect(stack['//'].metadata['secretstore-iac-machine-paths']).toBeUndefined();
  });
});

describe('one flag per changed setting, listing the identities it affects', () => {
  it('a CI job timeout of 2 h is one "TTL raised" flag: three TTLs of the three CI roles, 1h → 2h', async () => {
    const d = await diff(platformConfig, { ...platformConfig, ciJobTimeout: Duration.hours(2) });
    expect(d.changed.map((c) => c.name)).toEqual(['jwt/registry-ci', 'jwt/secretstore-iac-pipeline', 'jwt/secretstore-iac-plan']);
    expect(d.flags).toEqual([
      {
        kind: 'ttl-raised',
        identity: 'jwt/registry-ci',
        identities: ['jwt/registry-ci', 'jwt/secretstore-iac-pipeline', 'jwt/secretstore-iac-plan'],
        message: '`token_explicit_max_ttl`, `token_max_ttl`, `token_ttl` 1h → 2h',
      },
    ]);
    expect(markdownFlags(d)).toEqual([
      '- **TTL raised**, `jwt/registry-ci`, `jwt/secretstore-iac-pipeline`, `jwt/secretstore-iac-plan`: `token_explicit_max_ttl`, `token_max_ttl`, `token_ttl` 1h → 2h',
    ]);
  });

  it('settings changed to different values, or on different identities, stay apart', async () => {
    const people = (developers: Partial<PeopleConfig['groups'][string]>, admins: Partial<PeopleConfig['groups'][string]>): PlatformConfig =>
      withPeople({ ...PEOPLE, groups: { developers: { groups: ['developers'], ...developers }, 'platform-admins': { ...PEOPLE.groups['platform-admins'], ...admins } } });
    const d = await diff(people({}, {}), people({ tokenMaxTtl: Duration.hours(12) }, { tokenMaxTtl: Duration.hours(10) }));
    expect(d.flags.map((f) => `${f.identities.join(' ')}: ${f.message}`)).toEqual([
      'oidc/developers: `token_explicit_max_ttl`, `token_max_ttl` 8h → 12h',
      'oidc/platform-admins: `token_explicit_max_ttl`, `token_max_ttl` 8h → 10h',
    ]);
  });
});

describe('a new or changed login method is flagged, with the roles it logs in as', () => {
  it('the people section adds the OIDC method: "login method added" with its issuer settings and roles', async () => {
    const d = await diff(platformConfig, withPeople());
    expect(d.flags.filter((f) => f.kind === 'login-method-added')).toEqual([
      {
        kind: 'login-method-added',
        identity: 'oidc/',
        identities: ['oidc/developers', 'oidc/platform-admins'],
        authMethod: 'oidc',
        message:
          `new \`oidc\` auth method at \`oidc/\`: \`oidc_discovery_url\` ${PEOPLE.discoveryUrl}, \`oidc_client_id\` secretstore; ` +
          'whoever it accepts can log in as `oidc/developers`, `oidc/platform-admins`',
      },
    ]);
    expect(markdownFlags(d)).toContainEqual(expect.stringMatching(/^- \*\*login method added\*\*, auth method `oidc\/`: new `oidc` auth method at `oidc\/`/));
  });

  it('a changed discovery URL or client id is one "login method changed" flag per setting, on the method, listing its roles', async () => {
    const d = await diff(withPeople(), withPeople({ ...PEOPLE, discoveryUrl: 'https://sso.other.example/application/o/secretstore', clientId: 'secretstore-2' }));
    expect(d.flags.filter((f) => f.kind === 'trust-changed').map((f) => [f.identity, f.identities, f.message])).toEqual([
      ['oidc/', ['oidc/developers', 'oidc/platform-admins'], '`oidc_client_id` secretstore → secretstore-2; whoever it accepts can log in as `oidc/developers`, `oidc/platform-admins`'],
      ['oidc/', ['oidc/developers', 'oidc/platform-admins'], '`oidc_discovery_url` https://sso.acme.example/application/o/secretstore → https://sso.other.example/application/o/secretstore; whoever it accepts can log in as `oidc/developers`, `oidc/platform-admins`'],
    ]);
    // The roles' binding tables still show the method's fields (and the audience that follows the client id).
    expect(d.changed.find((c) => c.name === 'oidc/developers')!.bindings.map((b) => b.field)).toEqual(['bound_audiences', 'oidc_client_id', 'oidc_discovery_url']);
  });

  it('a changed CI issuer (ciUrl) flags the JWT method\'s issuer and discovery URL once each, for all three CI roles', async () => {
    const d = await diff(platformConfig, { ...platformConfig, settings: { ...platformConfig.settings, ciUrl: 'https://gitlab.other.example' } });
    expect(d.flags.filter((f) => f.kind === 'trust-changed').map((f) => f.message)).toEqual([
      '`bound_issuer` https://gitlab.acme.example → https://gitlab.other.example; whoever it accepts can log in as `jwt/registry-ci`, `jwt/secretstore-iac-pipeline`, `jwt/secretstore-iac-plan`',
      '`oidc_discovery_url` https://gitlab.acme.example → https://gitlab.other.example; whoever it accepts can log in as `jwt/registry-ci`, `jwt/secretstore-iac-pipeline`, `jwt/secretstore-iac-plan`',
    ]);
  });

  it('no login method change, no such flag', async () => {
    const d = await diff(withPeople(), withMachineReads());
    expect(d.flags.filter((f) => f.kind === 'login-method-added' || f.kind === 'trust-changed')).toEqual([]);
  });
});

describe('login methods on both sides: declared stacks and the live store', () => {
  it('the live store\'s auth mounts are read with their trust settings (the built-in token method left out): applied, no login method flag', async () => {
    const out = synthesized(platformConfig).outdir;
    const live = liveStoreConfiguration(appliedLiveStore(readDeclaredObjects(out)));
    expect(live.authMounts!.map((m) => `${m.path} ${m.type} ${Object.keys(m.settings).join(',')}`)).toEqual(['approle approle ', 'jwt jwt bound_issuer,oidc_discovery_url']);
    const d = diffAccess(await AccessModel.load(live, parser), await modelOf(platformConfig));
    expect(d.flags.filter((f) => f.kind === 'login-method-added' || f.kind === 'trust-changed')).toEqual([]);
  });

  it('a record that is not what the synthesis writes stops the analysis, naming the stack', async () => {
    const out = synthesized(withMachineReads());
    const file = path.join(out.outdir, 'stacks', 'people', 'cdk.tf.json');
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    doc['//'].metadata['secretstore-iac-machine-paths']['oidc/registry-owners']['secret/data/registry/svc-orchestrator'].reaches[0].kind = 'ci-password';
    fs.writeFileSync(file, JSON.stringify(doc));
    expect(() => readStoreConfiguration(out.outdir)).toThrow('stack people: //.metadata["secretstore-iac-machine-paths"] is not what the synthesis writes: synthesize again');
  });
});

// Issue 36: a machinePathReason with `<img>`, `@all` or a Markdown link reached the merge-request
// note as live Markdown. Every text of the configuration goes through the Markdown encoder.
describe('a hostile machinePathReason reaches the note as text, never as Markdown', () => {
  const HOSTILE = '<img src=x onerror=alert(1)> @all see [the runbook](https://evil.example/x) ![i](https://evil.example/i.png) #12 !3 ~label **bold** https://evil.example `code` | cell';
  it('every hostile word is inline code; the rest of the line is the library\'s', async () => {
    const d = await diff(withPeople(), withMachineReads(HOSTILE));
    const line = markdownFlags(d).find((l) => l.includes('registry/svc-orchestrator'))!;
    const reason = line.slice(line.indexOf('stated reason (machinePathReason): '));
    expect(reason).toContain('`"<img src=x onerror=alert(1)> @all see [the runbook](https://evil.example/x) ![i](https://evil.example/i.png) #12 !3 ~label **bold** https://evil.example`');
    // Outside code spans, nothing of the reason is Markdown, HTML, a mention, a reference or a link.
    const outsideCode = reason.replace(/(`+) .*? \1|(`+)[^`]*?\2/g, '');
    expect(outsideCode).not.toMatch(/[<>[\]!@#~*|]|https?:/);
  });
});
