/**
 * SSI-R18 (issue 45, rules read what the engine reads): the library orders a store object after the
 * auth mount of its own stack it lives under and after its stack's grant to the configuration
 * pipeline's apply role, on the constructs (`depends_on`, or the mount's resource as `backend`). An
 * override after that (`addOverride('depends_on', undefined)`, `addOverride('backend', 'approle')`,
 * a block only a stack override writes) undoes it in the document the engine loads: a first apply
 * then fails (HTTP 404 "no handler for route", HTTP 403). The rule reads the final documents and
 * follows depends_on and references at any depth. The store's side of the mount order is
 * test/store/mount-ordering.store.test.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Construct } from 'constructs';
import { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
import { ApproleAuthBackendRole } from '@cdktf/provider-vault/lib/approle-auth-backend-role';
import { VaultProvider } from '@cdktf/provider-vault/lib/provider';
import { platformConfig as shipped } from '../../../stacks/platform.config';
import { synthesisProblems } from '../../support/synthesized-platform';
import { Platform } from '../../../lib/platform/platform';
import { SecretStoreApp, SSI_R18 } from '../../../lib';
import { declaredElement } from '../../support/declared-element';
import { TerraformElement, TerraformStack } from '../../../lib/framework/framework';

/** The SSI-R18 lines of a synthesis of the shipped platform after `change`. */
const r18 = (change: (p: Platform, app: Construct) => void): string[] => synthesisProblems(shipped, change).filter((l) => l.includes(' SSI-R18 '));

const element = declaredElement;

const MOUNT = /vault_auth_backend\.approle_backend_\w+ \(the auth mount "approle" its stack enables \(app-roles\/approle\/backend\), which it lives under \(auth\/approle\/role\/orchestrator-dev\): .*HTTP 404 "no handler for route"\)\)/;
const GRANT = /vault_policy\.secretstore-iac-grant-pipeline-apply \(the configuration pipeline's grant to secretstore-iac-pipeline for this stack \(app-roles\/secretstore-iac-grant-pipeline-apply\): .*HTTP 403/;

describe('SSI-R18: a store object is written after what the store needs first, in the final documents', () => {
  it('holds for the platform as declared', () => {
    expect(r18(() => undefined)).toEqual([]);
  });

  it("a library role whose depends_on an override removed is still ordered: its backend refers to the mount, which waits for the grant", () => {
    expect(r18((_p, app) => void element(app, 'app-roles/orchestrator-dev/role').addOverride('depends_on', undefined))).toEqual([]);
  });

  it("the mount's depends_on removed as well: the mount and the role are reported, each naming the grant, and the override", () => {
    const lines = r18((_p, app) => {
      element(app, 'app-roles/orchestrator-dev/role').addOverride('depends_on', undefined);
      element(app, 'app-roles/approle/backend').addOverride('depends_on', undefined);
    });
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^\\[app-roles/approle/backend\\] SSI-R18 depends_on = \\[\\]: must be written after ${GRANT.source}.*; name it in depends_on \\(depends_on removed by addOverride\\('depends_on', …\\) on app-roles/approle/backend\\)`)),
      expect.stringMatching(/^\[app-roles\/orchestrator-dev\/role\] SSI-R18 depends_on = \[\]: must be written after vault_policy\.secretstore-iac-grant-pipeline-apply .*removed by addOverride\('depends_on', …\) on app-roles\/orchestrator-dev\/role/),
    ]);
  });

  it("addOverride('backend', 'approle') on a library role after the library ordered it: reported naming the mount and the override of backend", () => {
    const lines = r18((_p, app) => {
      const role = element(app, 'app-roles/orchestrator-dev/role');
      role.addOverride('backend', 'approle');
      role.addOverride('depends_on', undefined);
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^\\[app-roles/orchestrator-dev/role\\] SSI-R18 depends_on = \\[\\]: must be written after ${MOUNT.source}, and after ${GRANT.source}`));
    expect(lines[0]).toContain("name them in depends_on");
    expect(lines[0]).toContain("; backend set by addOverride('backend', …) on app-roles/orchestrator-dev/role");
  });

  it('the same override with the order kept (only the grant in depends_on): the mount alone is reported', () => {
    const lines = r18((_p, app) => void element(app, 'app-roles/orchestrator-dev/role').addOverride('backend', 'approle'));
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^\\[app-roles/orchestrator-dev/role\\] SSI-R18 depends_on = \\["vault_policy\\.secretstore-iac-grant-pipeline-apply"\\]: must be written after ${MOUNT.source}; name it in depends_on; backend set by`))]);
  });

  it('an order reached through another resource of the document (depends_on at any depth) counts', () => {
    expect(
      r18((_p, app) => {
        const role = element(app, 'app-roles/orchestrator-dev/role');
        role.addOverride('backend', 'approle');
        // The role waits for its policy, the policy for the mount: the engine writes the mount first.
        role.addOverride('depends_on', ['vault_policy.orchestrator-dev_policy_953A670E']);
        element(app, 'app-roles/orchestrator-dev/policy').addOverride('depends_on', ['vault_policy.secretstore-iac-grant-pipeline-apply', 'vault_auth_backend.approle_backend_05935A89']);
      }),
    ).toEqual([]);
  });

  it('a block only a stack override writes, in a stack the pipeline applies, is reported on the stack (the override says where it came from)', () => {
    const lines = r18((p) => void p.appRoles.addOverride('resource.vault_policy.sneaky', { name: 'sneaky', policy: 'path "secret/data/x" {\n  capabilities = ["read"]\n}\n' }));
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^\\[app-roles\\] SSI-R18 depends_on = \\[\\]: must be written after ${GRANT.source}.*; name it in depends_on; name written by the stack override resource\\.vault_policy\\.sneaky\\.name on app-roles`))]);
  });

  it('without a configuration pipeline only the mount order is asked', () => {
    const { configurationProject: _, ...noPipeline } = shipped as any;
    expect(synthesisProblems(noPipeline, (p) => void (p.appRoles.node.findAll().find((c) => c.node.path === 'app-roles/orchestrator-dev/role') as TerraformElement).addOverride('backend', 'approle')).filter((l) => l.includes(' SSI-R18 '))).toEqual([
      expect.stringMatching(new RegExp(`^\\[app-roles/orchestrator-dev/role\\] SSI-R18 depends_on = \\[\\]: must be written after ${MOUNT.source}; name it in depends_on; backend set by`)),
    ]);
  });

  it('in a plain TerraformStack (no SecretStoreStack in the app) too: its documents are read like any other', () => {
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-r18-plain-'));
    const app = new SecretStoreApp({ outdir: path.join(outdir, 'out') });
    const stack = new TerraformStack(app, 'plain');
    new VaultProvider(stack, 'vault');
    const mount = new AuthBackend(stack, 'mount', { type: 'approle', path: 'approle-plain' });
    const role = new ApproleAuthBackendRole(stack, 'role', { backend: 'approle-plain', roleName: 'plain', tokenPolicies: ['default'] });
    // The library ordered it after the mount (its backend is the mount's path as text); the override undoes that.
    role.addOverride('depends_on', undefined);
    const lines = app.problems().map((p) => `[${p.constructPath}] ${p.message}`);
    fs.rmSync(outdir, { recursive: true, force: true });
    expect(lines.filter((l) => l.includes('SSI-R18'))).toEqual([
      expect.stringMatching(new RegExp(`^\\[plain/role\\] SSI-R18 depends_on = \\[\\]: must be written after vault_auth_backend\\.${mount.friendlyUniqueId} \\(the auth mount "approle-plain" its stack enables \\(plain/mount\\)`)),
    ]);
  });

  it('is a platform rule with a stable id', () => {
    expect(SSI_R18.id).toBe('SSI-R18');
  });
});
