import { AppRoleApplication, AppRoleAuth, CiSecret, KvMount, SSI_R4, SSI_R5, SSI_R6 } from '../../../lib';
import { platformConfig } from '../../support/platform-config';
import { stackWithKvMount } from '../../support/kv-mount-stack';
import { ciSecretAt, findingsOf } from '../../support/rule-findings';

// Issue 19 §3: the path rules compare the API paths the store serves, on either KV version, not
// the text of the declared policy paths. The store applies the mount's real version and path.

const declaredV1 = { ...platformConfig, settings: { ...platformConfig.settings, kvMount: new KvMount('secret', 1) } };
const STORE_NOTE = (path: string) =>
  ` (on the store both reach ${path}: the store applies each mount's own KV version and path, not the declared ones)`;

describe('SSI-R6 on store API paths', () => {
  it('secret/ declared KV v1: a CI secret at data/<application prefix>/... is reported (on a v2 store it is the application\'s data path)', () => {
    expect(findingsOf(SSI_R6, (p) => ciSecretAt(p, 'data/acme/dev/orchestrator/database'), declaredV1)).toEqual([
      '[ci-access/x] SSI-R6 path = "data/acme/dev/orchestrator/database": lies inside the paths of application orchestrator-dev (app-roles/orchestrator-dev): CI would read application secrets' +
        STORE_NOTE('secret/data/acme/dev/orchestrator/database'),
    ]);
  });

  it.each(['metadata', 'delete', 'undelete', 'destroy', 'subkeys'])(
    'secret/ declared KV v1: a CI secret at %s/<application prefix>/... is reported too',
    (prefix) => {
      expect(findingsOf(SSI_R6, (p) => ciSecretAt(p, `${prefix}/acme/dev/orchestrator/database`), declaredV1)).toHaveLength(1);
    },
  );

  it('a CI secret on a mount declared at secret/data (inside the v2 mount secret/) is the application\'s data path: reported (the mount paths used to be compared as text)', () => {
    const findings = findingsOf(SSI_R6, (_p, app) => {
      const stack = stackWithKvMount(app, 'nested', new KvMount('secret/data', 1));
      new CiSecret(stack, 'x', { path: 'acme/dev/orchestrator/database', keys: ['token'], consumers: ['scan'], description: 'scan' });
    });
    expect(findings).toEqual([
      '[nested/x] SSI-R6 path = "acme/dev/orchestrator/database": lies inside the paths of application orchestrator-dev (app-roles/orchestrator-dev): CI would read application secrets',
    ]);
  });

  it('the same logical path on another mount (kv/) is allowed: the store serves it elsewhere', () => {
    expect(
      findingsOf(SSI_R6, (_p, app) => {
        const stack = stackWithKvMount(app, 'other', new KvMount('kv', 1));
        new CiSecret(stack, 'x', { path: 'acme/dev/orchestrator/database', keys: ['token'], consumers: ['scan'], description: 'scan' });
      }),
    ).toEqual([]);
  });

  it('a mount whose path only starts with the same letters (secret-x/) is another mount', () => {
    expect(
      findingsOf(SSI_R6, (_p, app) => {
        const stack = stackWithKvMount(app, 'other', new KvMount('secret-x', 2));
        new CiSecret(stack, 'x', { path: 'acme/dev/orchestrator/database', keys: ['token'], consumers: ['scan'], description: 'scan' });
      }),
    ).toEqual([]);
  });
});

describe('SSI-R5 on store API paths', () => {
  it('an application on secret/ declared v1 in one stack and v2 in another: the same paths on the store', () => {
    const findings = findingsOf(SSI_R5, (_p, app) => {
      const stack = stackWithKvMount(app, 'legacy', new KvMount('secret', 1));
      const auth = new AppRoleAuth(stack, 'approle', { path: 'approle-legacy' });
      new AppRoleApplication(stack, 'x', { auth, name: 'orchestrator', environment: 'dev', roleName: 'orchestrator-legacy' });
    });
    expect(findings).toEqual([
      '[legacy/x] SSI-R5 readablePath = "secret/acme/dev/orchestrator/*": overlaps secret/data/acme/dev/orchestrator/* of orchestrator-dev (app-roles/orchestrator-dev): cross-application secret access is not permitted' +
        STORE_NOTE('secret/acme/dev/orchestrator/*'),
    ]);
  });
});

describe('SSI-R4 on store API paths', () => {
  it('a CI secret declared again on secret/ declared v1 is the same secret on the store', () => {
    const findings = findingsOf(SSI_R4, (_p, app) => {
      const stack = stackWithKvMount(app, 'legacy', new KvMount('secret', 1));
      new CiSecret(stack, 'x', { path: 'vulnmgmt/svc-orchestrator', keys: ['token'], consumers: ['scan'], description: 'scan' });
    });
    expect(findings).toEqual([
      '[legacy/x] SSI-R4 path = "vulnmgmt/svc-orchestrator": is already declared by ci-access/vulnmgmt' + STORE_NOTE('secret/vulnmgmt/svc-orchestrator'),
    ]);
  });
});

describe('a CI secret named exactly like an application prefix (one mount, one version)', () => {
  it('is still an SSI-R6 overlap, as it always was, without the store-only note', () => {
    expect(findingsOf(SSI_R6, (p) => ciSecretAt(p, 'acme/dev/orchestrator'))).toEqual([
      '[ci-access/x] SSI-R6 path = "acme/dev/orchestrator": lies inside the paths of application orchestrator-dev (app-roles/orchestrator-dev): CI would read application secrets',
    ]);
  });
});
