/**
 * Issue 45 (SSI-R17 and the grants read namespaces as the store does), on real OpenBao (Vault's
 * open-source server has no namespaces: skipped there) with OpenTofu and Terraform 1.11.4: a raw
 * `vault_policy` written in namespace `team-a` of a stack the configuration pipeline applies, the
 * pipeline's roles in the root namespace. A token's policies are its namespace's, and a request in a
 * namespace below it is checked against the path prefixed with that namespace: the stack's grant
 * holds `team-a/sys/policies/acl/ns-policy`, and the first apply by the apply role (a JWT login the
 * test signs) writes the policy in `team-a`. Before (the grant held `sys/policies/acl/ns-policy`):
 * `Namespace: team-a ... PUT .../v1/sys/policies/acl/ns-policy ... Code: 403`, seen with OpenTofu.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { runEngine, TEST_ENGINES } from '../support/store/engine';
import { generateSigningKey, JwtSigningKey } from '../support/store/jwt-signer';
import { bootstrappedPipelineFixture, PlatformFixture, pipelineRoleToken } from '../support/store/platform-fixture';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/toolchain-env';
import { TEST_LOCAL_STATE_REASON } from '../support/platform-config';

const PROJECT_ID = '4244';
const describeOnOpenBao = storeKind() === 'openbao' ? describe.each(TEST_ENGINES) : describe.skip.each(TEST_ENGINES);

describeOnOpenBao('an object in a namespace below the pipeline role\'s is applied by the pipeline, with $engine', ({ engine, binary }) => {
  let store: RunningStore;
  let key: JwtSigningKey;
  let fixture: PlatformFixture;
  const run = (stack: string, args: string[], token: string) => runEngine(fixture.stackDir(stack), args, { store, token, binary: binary(), allowCodes: [0, 1, 2] });
  const applyRoleToken = () => pipelineRoleToken(store, key, 'secretstore-iac-pipeline', PROJECT_ID);

  beforeAll(async () => {
    store = await startStore();
    key = generateSigningKey();
    // The namespace exists before the pipeline writes in it (an administrator's).
    expect((await storeRequest(store, 'POST', 'sys/namespaces/team-a', {})).status).toBeLessThan(300);
    fixture = await bootstrappedPipelineFixture(store, `namespace-grants-${engine.split(' ')[0].toLowerCase()}`, { key, projectId: PROJECT_ID, binary: binary(), localStateReason: TEST_LOCAL_STATE_REASON, extend: (p) => void new Policy(p.appRoles, 'user_ns', { name: 'ns-policy', namespace: 'team-a', policy: 'path "secret/data/x" {\n  capabilities = ["read"]\n}\n' }) });
  });

  afterAll(async () => {
    await store?.stop();
    fixture?.cleanup();
  });

  it(`${engine}: the grant holds the namespace's prefix; the apply role's first apply writes the policy in team-a (exit 0, no 403), and its next plan has no changes`, async () => {
    const document = JSON.parse(fs.readFileSync(path.join(fixture.stackDir('app-roles'), 'cdk.tf.json'), 'utf8'));
    const grant = document.resource.vault_policy['secretstore-iac-grant-pipeline-apply'].policy as string;
    expect(grant).toContain('path "team-a/sys/policies/acl/ns-policy" {');
    const r = await run('app-roles', ['apply', '-auto-approve'], await applyRoleToken());
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/vault_policy\.user_ns: Creation complete after \S+ \[id=ns-policy\]/);
    const inTeam = await fetch(`${store.addr}/v1/sys/policies/acl/ns-policy`, { headers: { 'X-Vault-Token': store.rootToken, 'X-Vault-Namespace': 'team-a' } });
    expect(inTeam.status).toBe(200);
    expect((await storeRequest(store, 'GET', 'sys/policies/acl/ns-policy')).status).toBe(404);
    const again = await run('app-roles', ['plan', '-detailed-exitcode'], await applyRoleToken());
    expect([again.code, again.stderr]).toEqual([0, '']);
  });
});
