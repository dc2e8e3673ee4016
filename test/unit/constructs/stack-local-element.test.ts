import { TerraformOutput, TerraformStack } from 'cdktf';
import { Construct } from 'constructs';
import { CiJwtRole, SecretStoreStack } from '../../../lib';
import { isStackLocal } from '../../../lib/constructs/stack-local-element';
import { Platform } from '../../../lib/platform/platform';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig } from '../../support/platform-config';
import { withPeople } from '../../support/people-config';
import { outputFiles, synthesizePlatform } from '../../support/synthesized-platform';

// SecretStoreStack skips cdktf's preparing resolution of the library's stack-local elements (it only
// looks for references to other stacks). Proven here: the output is byte for byte what cdktf's own
// preparation of every element writes, for layouts with references across stacks.

/** The output with the library's preparation, and with cdktf's preparation of every element. */
function bothWays(config: PlatformConfig, extend?: (p: Platform, app: Construct) => void): [Record<string, string>, Record<string, string>] {
  const library = outputFiles(synthesizePlatform(config, extend).outdir);
  const cdktfOwn = jest.spyOn(SecretStoreStack.prototype, 'prepareStack').mockImplementation(function (this: SecretStoreStack) {
    TerraformStack.prototype.prepareStack.call(this);
  });
  try {
    return [library, outputFiles(synthesizePlatform(config, extend).outdir)];
  } finally {
    cdktfOwn.mockRestore();
  }
}

const sharded: PlatformConfig = { ...platformConfig, applicationSharding: { by: 'hash', shards: 3 } };

describe('Stack-local elements: the library\'s preparation writes what cdktf\'s own writes', () => {
  it.each<[string, PlatformConfig]>([
    ['the platform as configured', platformConfig],
    ['applications sharded away from their mount', sharded],
    ['people through single sign-on', withPeople()],
  ])('%s', (_name, config) => {
    const [library, cdktfOwn] = bothWays(config);
    expect(Object.keys(library).length).toBeGreaterThan(3);
    expect(library).toEqual(cdktfOwn);
  });

  it('a user\'s output in another stack that reads an application\'s Role ID: cdktf adds the cross-stack output either way', () => {
    const extend = (p: Platform, app: Construct) => {
      const mine = new TerraformStack(app, 'mine');
      new TerraformOutput(mine, 'orchestrator-role-id', { value: p.appRoles.applications.find((a) => a.roleName === 'orchestrator-dev')!.role.roleId });
    };
    const [library, cdktfOwn] = bothWays(platformConfig, extend);
    expect(library['stacks/app-roles/cdk.tf.json']).toContain('cross-stack-output-');
    expect(library).toEqual(cdktfOwn);
  });

  it('a CI role in another stack than its JWT method is prepared by cdktf: its mount is a cross-stack reference', () => {
    let role: CiJwtRole | undefined;
    const extend = (p: Platform, app: Construct) => {
      const other = new SecretStoreStack(app, 'other-ci', { settings: p.ciAccess.settings });
      role = new CiJwtRole(other, 'elsewhere', { auth: p.ciAccess.jwtAuth, roleName: 'elsewhere', boundClaims: { project_id: '7' } });
      role.policy.addRule('secret/data/other/*', ['read'], 'test');
    };
    const [library, cdktfOwn] = bothWays(platformConfig, extend);
    expect(isStackLocal(role!.role)).toBe(false);
    expect(isStackLocal(role!.policyResource)).toBe(true);
    expect(library['stacks/other-ci/cdk.tf.json']).toContain('terraform_remote_state');
    expect(library).toEqual(cdktfOwn);
  });
});
