/**
 * Requests an access invariant forbids, from the audit lines captured from the real stores
 * (test/fixtures/usage/*-audit.log) against the synthesized base configuration: `jwt/registry-ci`
 * read `secret/data/registry/svc-orchestrator` (allowed) and was refused
 * `secret/data/acme/dev/orchestrator/database`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AccessModel } from '../../../lib/access/access-model';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { runCli } from '../../../lib/cli/run-cli';
import { AccessInvariant } from '../../../lib/invariants/access-invariant';
import { AuditReadCounts, readAuditEntries } from '../../../lib/usage/audit-log-reader';
import { ForbiddenRequest, ForbiddenRequestCollector, forbiddenRequestsMarkdown } from '../../../lib/usage/forbidden-requests';
import { UsageAggregator } from '../../../lib/usage/usage-report';
import { ACCESS_FIXTURES, REPO_ROOT } from '../../support/paths';

const BASE = path.join(ACCESS_FIXTURES, 'base');
const fixture = (store: string) => path.join(REPO_ROOT, 'test', 'fixtures', 'usage', `${store}-audit.log`);

const NO_CI_REGISTRY: AccessInvariant = { id: 'no-ci-registry', reason: 'r1', who: { kind: 'ci' }, paths: ['secret/data/registry/*'], capabilities: ['read'] };
const NO_CI_ACME: AccessInvariant = { id: 'no-ci-acme', reason: 'r2', who: { kind: 'ci' }, paths: ['secret/data/acme/*'], capabilities: ['read'] };
const NO_APP_WRITES: AccessInvariant = { id: 'no-app-writes', reason: 'r3', who: { kind: 'application' }, paths: ['*'], capabilities: ['write'] };

async function forbidden(store: string, invariants: readonly AccessInvariant[]): Promise<ForbiddenRequest[]> {
  const configuration = readStoreConfiguration(BASE);
  const model = await AccessModel.load(configuration);
  const aggregator = new UsageAggregator(model, configuration);
  const collector = new ForbiddenRequestCollector(model, invariants);
  const counts: AuditReadCounts = { lines: 0, responses: 0, malformed: [], malformedCount: 0 };
  for await (const e of readAuditEntries([fixture(store)], {}, counts)) collector.add(aggregator.add(e), e);
  return collector.list();
}

describe.each(['openbao', 'vault'])('requests an invariant forbids in a real %s audit log', (store) => {
  it('reports an allowed request and a refused one, each with the invariant, identity and kind; other operations and kinds are not', async () => {
    const found = await forbidden(store, [NO_CI_REGISTRY, NO_CI_ACME, NO_APP_WRITES]);
    expect(found.map((f) => [f.invariant, f.identity, f.kind, f.operation, f.path, f.allowed, f.denied])).toEqual([
      ['no-ci-acme', 'jwt/registry-ci', 'ci', 'read', 'secret/data/acme/dev/orchestrator/database', 0, 1],
      ['no-ci-registry', 'jwt/registry-ci', 'ci', 'read', 'secret/data/registry/svc-orchestrator', 1, 0],
    ]);
    expect(forbiddenRequestsMarkdown(found)).toContain('| `no-ci-registry` | `jwt/registry-ci` | ci | read | `secret/data/registry/svc-orchestrator` | 1 | 0 |');
    expect(await forbidden(store, [])).toEqual([]);
    // The application's refused read of authentik-role's own path is an attempt on another application's path.
    const cross = await forbidden(store, [{ id: 'no-cross-app', reason: 'r4', who: { kind: 'application' }, paths: ['@other-applications'], capabilities: ['read'] }]);
    expect(cross.map((f) => [f.identity, f.path, f.allowed, f.denied])).toEqual([['approle/orchestrator-dev', 'secret/data/acme/shared/identity/config', 0, 1]]);
  });

  it('usage --invariants adds them to the report (JSON) and makes the exit code 1', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'usage-inv-'));
    try {
      const file = path.join(dir, 'inv.json');
      fs.writeFileSync(file, JSON.stringify({ invariants: [NO_CI_REGISTRY] }));
      const out: string[] = [];
      const code = await runCli(['usage', BASE, '--log', fixture(store), '--invariants', file, '--format', 'json'], {
        env: {},
        cwd: dir,
        isTerminal: false,
        stdout: (l) => out.push(l),
        stderr: () => undefined,
      });
      expect(code).toBe(1);
      expect(JSON.parse(out.join('\n')).forbidden.map((f: ForbiddenRequest) => f.path)).toEqual(['secret/data/registry/svc-orchestrator']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
