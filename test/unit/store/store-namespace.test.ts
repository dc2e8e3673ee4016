import * as http from 'http';
import { AddressInfo } from 'net';
import { buildEngineRunEnvironment } from '../../../lib/engine/engine-run-environment';
import { renderCiLoginScript } from '../../../lib/render/ci-login-script';
import { appRoleAutoAuthLines } from '../../../lib/render/agent-proxy-shared-hcl';
import { StoreClient } from '../../../lib/store/store-client';
import { resolveStoreNamespace, StoreNamespaceError } from '../../../lib/store/store-namespace-setting';
import { platformConfig } from '../../support/platform-config';
import { outputFiles, synthesisProblems, synthesizePlatform } from '../../support/synthesized-platform';

// Namespaces (OpenBao, Vault Enterprise, HCP Vault's `admin`): the stacks' provider, the tools'
// requests, the engine, the CI login and the agents must all name the same one. What the stores do
// with it is proven in test/store/namespace.store.test.ts.

const inNamespace = (namespace: string) => ({ ...platformConfig, settings: { ...platformConfig.settings, namespace } });

describe('settings.namespace: every stack works in the declared namespace', () => {
  it('each stack\'s vault provider is given the namespace, canonical (no surrounding slashes)', () => {
    const p = synthesizePlatform(inNamespace('/admin/team/'));
    for (const stack of ['ci-access', 'app-roles']) expect(p.stacks[stack].provider.vault).toEqual([{ namespace: 'admin/team' }]);
  });

  it('without it the provider block is as before (root namespace)', () => {
    const p = synthesizePlatform(platformConfig);
    expect(p.stacks['ci-access'].provider.vault).toEqual([{}]);
  });

  it('the CI login and the agent files send it', () => {
    const files = outputFiles(synthesizePlatform(inNamespace('admin')).outdir);
    expect(files['ci/secretstore-login.sh']).toContain("_ss_namespace='admin'\n");
    expect(files['ci/secretstore-login.sh']).toContain('-H "X-Vault-Namespace: $_ss_namespace"');
    expect(files['agents/orchestrator-dev/agent.hcl']).toContain('    namespace   = "admin"\n');
    expect(outputFiles(synthesizePlatform(platformConfig).outdir)['agents/orchestrator-dev/agent.hcl']).not.toContain('namespace   =');
  });

  it.each([
    ['', 'must name a namespace (`admin`, `admin/team`); leave it out for the root namespace'],
    ['a b', '"a b" is not a namespace name: letters, digits, "_" and "-", separated by "/"'],
    ['admin/../root', '".." is not a namespace name: letters, digits, "_" and "-", separated by "/"'],
    ['sys', '"sys" is reserved by the store (root, sys, audit, auth, cubbyhole, identity) and cannot name a namespace'],
  ])('namespace %j is refused: %s', (value, rule) => {
    expect(synthesisProblems(inNamespace(value))).toContain(`[ci-access] settings.namespace = ${JSON.stringify(value)}: ${rule}`);
  });
});

describe('the tools use the namespace the stacks were applied to', () => {
  it('takes VAULT_NAMESPACE, BAO_NAMESPACE or SECRETSTORE_NAMESPACE, canonical', () => {
    expect(resolveStoreNamespace({ BAO_NAMESPACE: '/team/' })).toBe('team');
    expect(resolveStoreNamespace({ VAULT_NAMESPACE: 'admin' }, ['admin'])).toBe('admin');
    expect(resolveStoreNamespace({})).toBeUndefined();
  });

  it('takes the stacks\' namespace when no variable names one', () => {
    expect(resolveStoreNamespace({}, ['admin', 'admin'])).toBe('admin');
    expect(resolveStoreNamespace({}, ['', ''])).toBeUndefined();
  });

  it('refuses variables that disagree, and a variable that disagrees with the stacks (drift would read another namespace)', () => {
    expect(() => resolveStoreNamespace({ VAULT_NAMESPACE: 'a', BAO_NAMESPACE: 'b' })).toThrow(StoreNamespaceError);
    expect(() => resolveStoreNamespace({ VAULT_NAMESPACE: 'a', BAO_NAMESPACE: 'b' })).toThrow('The store namespace variables disagree: VAULT_NAMESPACE=a, BAO_NAMESPACE=b. Unset all but one.');
    expect(() => resolveStoreNamespace({ VAULT_NAMESPACE: 'other' }, ['admin'])).toThrow(
      'VAULT_NAMESPACE=other but the synthesized stacks declare settings.namespace "admin": the engine applies to the stacks\' namespace, so the tools would read another one.',
    );
    expect(() => resolveStoreNamespace({ VAULT_NAMESPACE: 'admin' }, [''])).toThrow(/declare settings\.namespace \(root: none\)/);
    expect(() => resolveStoreNamespace({}, ['a', 'b'])).toThrow(/declare different namespaces \(a, b\)/);
  });

  it('the engine gets the namespace and a BAO_TOKEN as the provider reads them (VAULT_NAMESPACE, VAULT_TOKEN)', () => {
    const engineEnvironment = (env: NodeJS.ProcessEnv, namespace?: string): NodeJS.ProcessEnv => {
      const run = buildEngineRunEnvironment(env, { cwd: process.cwd(), address: 'https://s.example', namespace });
      run.dispose();
      return run.env;
    };
    const env = engineEnvironment({ BAO_TOKEN: 't', BAO_NAMESPACE: 'team' }, 'team');
    expect(env.VAULT_NAMESPACE).toBe('team');
    expect(env.VAULT_TOKEN).toBe('t');
    expect(engineEnvironment({ VAULT_TOKEN: 'v', BAO_TOKEN: 't' }).VAULT_TOKEN).toBe('v');
    expect(engineEnvironment({}).VAULT_NAMESPACE).toBeUndefined();
  });

  it('the store client sends X-Vault-Namespace on every request, and none in the root namespace', async () => {
    const seen: (string | undefined)[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers['x-vault-namespace'] as string | undefined);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await StoreClient.fromEnvironment({ VAULT_ADDR: address, VAULT_TOKEN: 't', BAO_NAMESPACE: 'team' }).request('GET', 'sys/auth');
      await StoreClient.fromEnvironment({ VAULT_ADDR: address, VAULT_TOKEN: 't' }, true, undefined, ['admin']).request('GET', 'sys/auth');
      await StoreClient.fromEnvironment({ VAULT_ADDR: address, VAULT_TOKEN: 't' }).request('GET', 'sys/auth');
    } finally {
      await new Promise((r) => server.close(() => r(undefined)));
    }
    expect(seen).toEqual(['team', 'admin', undefined]);
  });
});

describe('the generated files in a namespace', () => {
  it('the CI login sends the header on the login and every read, and exports VAULT_NAMESPACE with the token', () => {
    const script = renderCiLoginScript({ roleName: 'r', authPath: 'jwt', audience: 'https://ci.example', namespace: 'admin', exportVaultToken: true });
    expect(script.match(/-H "X-Vault-Namespace: \$_ss_namespace"/g)).toHaveLength(2);
    expect(script).toContain('export VAULT_NAMESPACE="$_ss_namespace"');
    const root = renderCiLoginScript({ roleName: 'r', authPath: 'jwt', audience: 'https://ci.example', exportVaultToken: true });
    expect(root).not.toContain('X-Vault-Namespace');
    expect(root).not.toContain('_ss_namespace');
  });

  it('the agent and the proxy log in (and the agent renders) in the namespace', () => {
    const lines = appRoleAutoAuthLines({ mountPath: 'auth/approle', namespace: 'admin/team', exitOnError: true, roleIdFile: '/r', secretIdFile: '/s' });
    expect(lines).toContain('    namespace   = "admin/team"');
  });
});
