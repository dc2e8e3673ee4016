/**
 * A configuration source for the narrowing's tests (issue 47), what it evaluates to, its synthesized
 * rules, and a usage report of a window in which some of its rules were used.
 */
import * as ts from 'typescript';
import { AccessModel } from '../../lib/access/access-model';
import { readStoreConfiguration } from '../../lib/access/store-configuration';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { ruleSources } from '../../lib/usage/rule-sources';
import { UsageAggregator, UsageReport } from '../../lib/usage/usage-report';
import { synthesizePlatform } from './synthesized-platform';

/** A configuration source as a user writes it: two accounts, a people group with three reads. */
export const NARROWING_SOURCE = `import { Duration, PlatformConfig } from 'secretstore-iac';

// The platform's configuration.
export const platformConfig: PlatformConfig = {
  settings: {
    organisation: 'acme',
    ciUrl: 'https://gitlab.acme.example',
    registryHost: 'registry.acme.example',
  },
  ciJobTimeout: Duration.minutes(60),
  accounts: {
    // Mirrors packages nightly.
    mirror: {
      permissions: ['raw:read'],
      usedBy: 'the mirror job',
      consumers: ['mirror-sync'],
    },
    helm: { permissions: ['raw:read', 'raw:write'], usedBy: 'helm charts', readByCi: true },
  },
  people: {
    discoveryUrl: 'https://sso.acme.example/application/o/secretstore',
    clientId: 'secretstore',
    storeUrl: 'https://vault.acme.example',
    groups: {
      ops: {
        groups: ['ops'],
        reads: [{ path: 'team/a' }, { path: 'team/b' }, { path: 'team/c', subtree: true }],
      },
    },
  },
};
`;

/**
 * {@link NARROWING_SOURCE} with two applications of its own and a second people group, for
 * `--retire-idle`: with {@link NARROWING_USED} and billing-dev's reads used, `search-dev` and `audit`
 * never log in.
 */
export const NARROWING_RETIRE_SOURCE = NARROWING_SOURCE.replace(
  '  people: {\n',
  "  applications: {\n    'billing-dev': { name: 'billing', environment: 'dev' },\n    'search-dev': { name: 'search', environment: 'dev' },\n  },\n  people: {\n",
).replace("      ops: {\n", "      audit: { groups: ['audit'], reads: [{ path: 'audit/reports' }, { path: 'audit/logs' }] },\n      ops: {\n");

/** Where {@link narrowingSourceOn} puts {@link NARROWING_SOURCE}: a real store's test installation. */
export interface NarrowingInstallation {
  /** `settings` as the store test's configuration has them (`TEST_SETTINGS` and the store's kind). */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The CI key source's public key (PEM): the test signs the job tokens with its private key. */
  readonly publicKeyPem: string;
  /** `ciJobTimeout`, in minutes. */
  readonly jobTimeoutMinutes: number;
  /** The OpenID provider's discovery URL (`people.discoveryUrl`). */
  readonly discoveryUrl: string;
  /** The store's address (`people.storeUrl`). */
  readonly storeUrl: string;
}

/**
 * {@link NARROWING_SOURCE} on a real store (the narrowing's store test): the same accounts and people
 * group, word for word, with the installation's settings, the test's own CI key and the real OpenID
 * provider and store in place of the example's placeholders.
 * @throws Error when NARROWING_SOURCE no longer holds a text this replaces (the two must not drift apart)
 */
export function narrowingSourceOn(at: NarrowingInstallation): string {
  const replace = (text: string, from: string, to: string) => {
    if (!text.includes(from)) throw new Error(`NARROWING_SOURCE holds no ${JSON.stringify(from)}: narrowingSourceOn needs updating`);
    return text.replace(from, to);
  };
  const settings = Object.entries(at.settings).map(([k, v]) => `    ${k}: ${JSON.stringify(v)},\n`).join('');
  let source = replace(NARROWING_SOURCE, "import { Duration, PlatformConfig } from 'secretstore-iac';", "import { Duration, JwtKeySource, PlatformConfig } from 'secretstore-iac';");
  source = replace(
    source,
    "  settings: {\n    organisation: 'acme',\n    ciUrl: 'https://gitlab.acme.example',\n    registryHost: 'registry.acme.example',\n  },\n  ciJobTimeout: Duration.minutes(60),\n",
    `  settings: {\n${settings}  },\n  ciKeySource: JwtKeySource.publicKeys([${JSON.stringify(at.publicKeyPem)}]),\n  ciJobTimeout: Duration.minutes(${at.jobTimeoutMinutes}),\n`,
  );
  source = replace(source, "discoveryUrl: 'https://sso.acme.example/application/o/secretstore',", `discoveryUrl: ${JSON.stringify(at.discoveryUrl)},`);
  return replace(source, "storeUrl: 'https://vault.acme.example',", `storeUrl: ${JSON.stringify(at.storeUrl)},`);
}

/** The PlatformConfig a source evaluates to (transpiled, `secretstore-iac` being this library). */
export function evaluateConfigSource(source: string): PlatformConfig {
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  const exports: Record<string, unknown> = {};
  const lib = require('../../lib');
  new Function('require', 'exports', js)((name: string) => (name === 'secretstore-iac' ? lib : require(name)), exports);
  return exports.platformConfig as PlatformConfig;
}

/** Every rule of every synthesized policy, as `policy rule` (a read's declaration `reads[i]` renumbers when one before it goes: not compared). */
export function synthesizedRules(config: PlatformConfig): { rules: Set<string>; outdir: string } {
  const { outdir } = synthesizePlatform(config);
  const rules = new Set<string>();
  for (const [name, policy] of readStoreConfiguration(outdir).policies) {
    for (const rule of ruleSources(policy.text).keys()) rules.add(`${name} ${rule}`);
  }
  return { rules, outdir };
}

/**
 * The report of a window in which `used` rules (`identity rule`) were used, three requests each, and
 * nothing else: built from the aggregator's report of an empty log, those rules moved to `used`.
 */
export async function reportWithUse(outdir: string, used: readonly string[]): Promise<UsageReport> {
  const configuration = readStoreConfiguration(outdir);
  const aggregator = new UsageAggregator(await AccessModel.load(configuration), configuration);
  const empty = aggregator.report({ lines: 0, responses: 0, malformed: [], malformedCount: 0 }, { since: '2026-09-01T00:00:00.000Z' });
  const at = '2026-11-28T04:07:02.000Z';
  return {
    ...empty,
    seen: { first: '2026-09-02T00:00:00.000Z', last: at },
    identities: empty.identities.map((u) => {
      const mine = u.unused.filter((g) => used.includes(`${u.identity} ${g.rule}`));
      if (mine.length === 0) return u;
      return {
        ...u,
        logins: 1,
        lastSeen: at,
        unused: u.unused.filter((g) => !mine.includes(g)),
        used: mine.map((g) => ({ rule: g.rule, policies: g.policies.map((p) => p.name), operations: ['read'], count: 3, lastUse: at, requests: [{ path: g.rule.replace(/\/\*$/, '/x'), operation: 'read', count: 3, lastUse: at }] })),
      };
    }),
  };
}

/** The rules used in the window of {@link reportWithUse} in the tests: one account, one read. */
export const NARROWING_USED = ['jwt/registry-ci secret/data/registry/svc-helm', 'oidc/ops secret/data/team/b'];

/** The report of {@link NARROWING_RETIRE_SOURCE}'s window: {@link NARROWING_USED} and every rule of billing-dev used; search-dev and audit never log in. */
export async function retireReport(outdir: string): Promise<UsageReport> {
  const empty = await reportWithUse(outdir, []);
  const billing = empty.identities.find((u) => u.identity === 'approle/billing-dev')!.unused.map((g) => `approle/billing-dev ${g.rule}`);
  return reportWithUse(outdir, [...NARROWING_USED, ...billing]);
}
