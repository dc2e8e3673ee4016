import { KvPath, SSI_R12 } from '../../../lib';
import { findingsOf } from '../../support/rule-findings';
import { PEOPLE, withPeople } from '../../support/people-config';

const readsOf = (reads: { path: string; subtree?: boolean; machinePathReason?: string }[]) =>
  withPeople({ ...PEOPLE, groups: { ops: { groups: ['ops'], reads } } });

describe('SSI-R12 (spec §5.6): a people role never reaches a CI or application path by accident', () => {
  it('holds for people who read their own team paths', () => {
    expect(findingsOf(SSI_R12, () => undefined, withPeople())).toEqual([]);
  });

  it('refuses a read of a CI secret, naming the secret and the way out', () => {
    expect(findingsOf(SSI_R12, () => undefined, readsOf([{ path: 'registry/svc-orchestrator' }]))).toEqual([
      '[people/group-ops] SSI-R12 policy.rules["secret/data/registry/svc-orchestrator"] = ["read"]: reaches CI secret registry/svc-orchestrator (ci-access/svc-orchestrator): people never read a CI or application credential by accident; narrow the path, or grant it with a machinePathReason that says why',
    ]);
  });

  it('refuses a subtree that covers an application (and its metadata listing), whatever KV form', () => {
    const found = findingsOf(SSI_R12, () => undefined, readsOf([{ path: 'acme/dev', subtree: true }]));
    expect(found).toHaveLength(2);
    expect(found[0]).toContain('policy.rules["secret/data/acme/dev/*"]');
    expect(found[0]).toContain("application orchestrator-dev's secret/data/acme/dev/orchestrator/* (app-roles/orchestrator-dev)");
    expect(found[1]).toContain('policy.rules["secret/metadata/acme/dev/*"]');
  });

  it('refuses a people role handed to a CI secret as a reader (no grant of its own, so no reason)', () => {
    const found = findingsOf(
      SSI_R12,
      (p) => p.ciAccess.ciSecrets[0].grantRead(p.people!.roles.developers),
      withPeople(),
    );
    expect(found).toEqual([expect.stringMatching(/^\[people\/group-developers\] SSI-R12 policy\.rules\["secret\/data\/codequality\/svc-orchestrator"\]/)]);
  });

  it('allows the same read when the grant names why', () => {
    expect(
      findingsOf(SSI_R12, () => undefined, readsOf([{ path: 'registry/svc-orchestrator', machinePathReason: 'break-glass rotation of the push account by the registry owners' }])),
    ).toEqual([]);
  });

  it('the opt-in is per grant: a reason on one path does not cover another', () => {
    const found = findingsOf(
      SSI_R12,
      (p) => p.people!.roles.ops.grantRead(KvPath.secret(p.ciAccess.settings.kvMount, 'vulnmgmt/svc-orchestrator')),
      readsOf([{ path: 'registry/svc-orchestrator', machinePathReason: 'break-glass rotation of the push account by the registry owners' }]),
    );
    expect(found).toEqual([expect.stringContaining('policy.rules["secret/data/vulnmgmt/svc-orchestrator"]')]);
  });
});
