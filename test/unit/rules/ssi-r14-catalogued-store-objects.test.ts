import { GenericSecret } from '@cdktf/provider-vault/lib/generic-secret';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { SSI_R14 } from '../../../lib';
import { withPeople } from '../../support/people-config';
import { findingsOf } from '../../support/rule-findings';
import { userStack } from '../../support/user-stack';
import { TEST_LOCAL_STATE_REASON } from '../../support/platform-config';

const UNCATALOGUED =
  'has no entry in the catalogue of store objects, so no name check, pipeline grant or live-store reader covers it (it could overwrite an object another declaration writes, unnoticed); add an entry for it in lib/catalogue/ (one file per kind, listed in store-object-catalogue.ts), or declare the object with a resource type the catalogue has';

describe('SSI-R14: every store resource a stack synthesizes has a catalogue entry', () => {
  it('holds for the platform with people, the pipeline roles and the reader policy', () => {
    expect(findingsOf(SSI_R14, undefined, { ...withPeople(), configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON }, readerPolicy: true })).toEqual([]);
  });

  it('a raw vault_generic_secret in a user stack is reported; a raw vault_policy beside it is catalogued', () => {
    expect(
      findingsOf(SSI_R14, (_p, app) => {
        const stack = userStack(app);
        new GenericSecret(stack, 'secret', { path: 'secret/x', dataJson: '{}' });
        new Policy(stack, 'policy', { name: 'team-a', policy: '' });
      }),
    ).toEqual([`[user/secret] SSI-R14 resource type = "vault_generic_secret": ${UNCATALOGUED}`]);
  });

  it('a raw vault_generic_secret inside a platform stack is reported too', () => {
    expect(findingsOf(SSI_R14, (p) => void new GenericSecret(p.appRoles, 'secret', { path: 'secret/x', dataJson: '{}' }))).toEqual([
      `[app-roles/secret] SSI-R14 resource type = "vault_generic_secret": ${UNCATALOGUED}`,
    ]);
  });
});
