import { Fn, TerraformVariable } from 'cdktf';
import { ApproleAuthBackendRole } from '@cdktf/provider-vault/lib/approle-auth-backend-role';
import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { Policy } from '@cdktf/provider-vault/lib/policy';
import { SSI_R15 } from '../../../lib';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { withPeople } from '../../support/people-config';
import { findingsOf } from '../../support/rule-findings';
import { userStack } from '../../support/user-stack';

const FIX =
  'no name rule can check that it is not another object\'s; write the name as a plain string (a literal `${` is written `$${` in Terraform JSON: pass the text, the library escapes it)';

describe('SSI-R15: the name of every store object is known at synthesis', () => {
  it('holds for the platform as declared, with people, the pipeline roles and the reader policy', () => {
    expect(findingsOf(SSI_R15)).toEqual([]);
    expect(findingsOf(SSI_R15, undefined, { ...withPeople(), configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON }, readerPolicy: true })).toEqual([]);
  });

  it('names the engine computes from literals pass this rule (the other name rules compare their value)', () => {
    expect(
      findingsOf(SSI_R15, (_p, app) => {
        const s = userStack(app);
        new Policy(s, 'a', { name: '${"team-a"}', policy: '' });
        new Policy(s, 'b', { name: Fn.lower('TEAM-B'), policy: '' });
        new Policy(s, 'c', { name: Fn.join('-', ['team', 'c']), policy: '' });
        new Policy(s, 'd', { name: 'a literal $${x}', policy: '' });
      }),
    ).toEqual([]);
  });

  it('every name whose value only the engine knows is refused, all at once, naming path, field, value and the fix', () => {
    expect(
      findingsOf(SSI_R15, (_p, app) => {
        const s = userStack(app);
        const v = new TerraformVariable(s, 'name', { type: 'string' });
        new Policy(s, 'a', { name: v.stringValue, policy: '' });
        new Policy(s, 'b', { name: Fn.title('registry-ci'), policy: '' });
        new Policy(s, 'c', { name: '%{ if true }registry-ci%{ endif }', policy: '' });
        const mount = new AuthBackend(s, 'm', { type: 'approle', path: `${v.stringValue}-approle` });
        new ApproleAuthBackendRole(s, 'r', { backend: mount.path, roleName: Fn.lower('\u00c9') });
      }),
    ).toEqual([
      `[user/a] SSI-R15 name = "\${var.name}": is a Terraform template the engine evaluates when it plans (the reference var.name, whose value is known only when the engine plans): the name it gives an ACL policy on the store is not known at synthesis, so ${FIX}`,
      `[user/b] SSI-R15 name = "\${title(\\"registry-ci\\")}": is a Terraform template the engine evaluates when it plans (the function title(), which the library does not compute): the name it gives an ACL policy on the store is not known at synthesis, so ${FIX}`,
      `[user/c] SSI-R15 name = "%{ if true }registry-ci%{ endif }": is a Terraform template the engine evaluates when it plans (a template directive "%{"): the name it gives an ACL policy on the store is not known at synthesis, so ${FIX}`,
      expect.stringMatching(/^\[user\/m\] SSI-R15 path = "\$\{var\.name\}-approle": .*the reference var\.name/),
      expect.stringMatching(/^\[user\/r\] SSI-R15 backend = "\$\{vault_auth_backend\.m\.path\}": .*the reference vault_auth_backend\.m\.path/),
      expect.stringMatching(/^\[user\/r\] SSI-R15 roleName = "\$\{lower\(\\"É\\"\)\}": .*lower\(\) of text beyond ASCII/),
    ]);
  });

  it('a namespace the engine computes at plan time is refused too', () => {
    const findings = findingsOf(SSI_R15, (_p, app) => {
      const s = userStack(app);
      const v = new TerraformVariable(s, 'ns', { type: 'string' });
      new Policy(s, 'a', { name: 'team-a', policy: '', namespace: v.stringValue });
    });
    expect(findings).toEqual([expect.stringMatching(/^\[user\/a\] SSI-R15 namespace = "\$\{var\.ns\}": /)]);
  });

  it('is checked at every synthesis: the platform config of the repository passes it', () => {
    expect(findingsOf(SSI_R15, undefined, platformConfig)).toEqual([]);
  });
});
