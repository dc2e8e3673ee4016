/**
 * Each stack's engine run in a pipeline job gets a token of its own (lib/pipeline/stack-token.ts;
 * docs/pipelines.md §9), on the real store: the job's token carries the pipeline role's own policy and
 * its grant of every stack; the stack's token, a child of it made by the job's own code
 * (`storeStackTokens`, `auth/token/create`), carries the role's own policy, default and the stack's
 * grant only: it reads the stack's object and is refused the other stack's, which the job's token
 * reads; it may make the provider's child token; it is revoked when the stack's run ends. On OpenBao,
 * the same inside a namespace (the job's, `VAULT_NAMESPACE`, as the CI login sets it).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { describePipeline } from '../../lib/pipeline/pipeline-description';
import { PipelineJobLog } from '../../lib/pipeline/pipeline-job-log';
import { storeStackTokens, withStackToken } from '../../lib/pipeline/stack-token';
import { PIPELINE_OPTIONS } from '../support/pipeline-options';
import { RunningStore, startStore, storeRequest } from '../support/store/store-server';
import { storeKind } from '../support/store/toolchain-env';

const ROLE = 'secretstore-iac-pipeline';
const STACKS = ['app-roles-1', 'app-roles-2'];
const rule = (p: string, caps: string[]) => `path "${p}" {\n  capabilities = [${caps.map((c) => `"${c}"`).join(', ')}]\n}\n`;

describe('a stack\'s engine run carries only its own grant', () => {
  let store: RunningStore;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stack-token-'));
  const description = describePipeline({ ...PIPELINE_OPTIONS, stacks: ['ci-access', ...STACKS] });

  beforeAll(async () => {
    store = await startStore();
  });
  afterAll(async () => {
    await store?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** In `namespace` (root when empty): the role's own policy, a grant per stack reading its object (a policy), and a job token carrying them all. */
  async function jobToken(namespace: string): Promise<{ token: string; request: (method: string, p: string, body?: unknown, token?: string) => ReturnType<typeof storeRequest> }> {
    const request = async (method: string, p: string, body?: unknown, token?: string) => {
      const headers: Record<string, string> = { 'X-Vault-Token': token ?? store.rootToken, ...(namespace ? { 'X-Vault-Namespace': namespace } : {}) };
      const res = await fetch(`${store.addr}/v1/${p}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : '' };
    };
    const put = async (p: string, body: unknown) => expect((await request('PUT', p, body)).status).toBeLessThan(300);
    await put(`sys/policies/acl/${ROLE}`, { policy: rule('auth/token/create', ['update']) });
    for (const stack of STACKS) {
      await put(`sys/policies/acl/object-${stack}`, { policy: rule('secret/x', ['read']) });
      await put(`sys/policies/acl/${ROLE}-${stack}`, { policy: rule(`sys/policies/acl/object-${stack}`, ['read']) });
    }
    const created = await request('POST', 'auth/token/create', { policies: [ROLE, ...STACKS.map((s) => `${ROLE}-${s}`)] });
    expect(created.status).toBe(200);
    return { token: created.body.auth.client_token, request };
  }

  const namespaces = storeKind() === 'vault' ? [''] : ['', 'team-a'];
  it.each(namespaces.map((n) => [n === '' ? 'the root namespace' : `namespace ${n}`, n]))('%s: the stack\'s token reads its object and not the other stack\'s, which the job\'s token reads; revoked after', async (_name, namespace) => {
    if (namespace !== '') expect((await storeRequest(store, 'POST', `sys/namespaces/${namespace}`, {})).status).toBeLessThan(300);
    const job = await jobToken(namespace);
    const other = 'sys/policies/acl/object-app-roles-2';
    expect((await job.request('GET', other, undefined, job.token)).status).toBe(200);

    const lines: string[] = [];
    const env = { VAULT_ADDR: store.addr, VAULT_TOKEN: job.token, HOME: dir, ...(namespace ? { VAULT_NAMESPACE: namespace } : {}) };
    const ctx = { dir, outdir: path.join(dir, 'cdktf.out'), description, env, log: new PipelineJobLog('plan', (l) => lines.push(l)), engine: async () => 0, tokens: storeStackTokens(env) };
    let stackToken = '';
    const seen: Record<string, unknown> = {};
    const code = await withStackToken(ctx, 'app-roles-1', {}, async (added) => {
      stackToken = added.VAULT_TOKEN;
      seen.policies = (await job.request('GET', 'auth/token/lookup-self', undefined, stackToken)).body.data.policies;
      seen.own = (await job.request('GET', 'sys/policies/acl/object-app-roles-1', undefined, stackToken)).status;
      seen.other = (await job.request('GET', other, undefined, stackToken)).status;
      // The vault provider makes its own child token of it.
      seen.child = (await job.request('POST', 'auth/token/create', { policies: [ROLE, `${ROLE}-app-roles-1`], ttl: '60s' }, stackToken)).status;
      return 0;
    });
    expect(code).toBe(0);
    expect(stackToken).not.toBe('');
    expect(seen).toEqual({ policies: ['default', ROLE, `${ROLE}-app-roles-1`], own: 200, other: 403, child: 200 });
    expect(lines).toEqual([
      `secretstore-iac pipeline plan: app-roles-1: the engine runs with a token of its own carrying default, ${ROLE}, ${ROLE}-app-roles-1: role ${ROLE}'s own policy and default, ${ROLE}-app-roles-1 (its own grant); not the 1 other stacks' grants the job's token carries (the store builds a token's ACL from all its policies on every request)`,
    ]);
    // Revoked when the run ended; the job's token is not.
    expect((await job.request('GET', 'auth/token/lookup-self', undefined, stackToken)).status).toBe(403);
    expect((await job.request('GET', other, undefined, job.token)).status).toBe(200);
  });

  it('the root token (a laptop): used as it is, saying so, no token made', async () => {
    const lines: string[] = [];
    const env = { VAULT_ADDR: store.addr, VAULT_TOKEN: store.rootToken, HOME: dir };
    const ctx = { dir, description, env, log: new PipelineJobLog('plan', (l) => lines.push(l)), engine: async () => 0, tokens: storeStackTokens(env) };
    const tokens: (string | undefined)[] = [];
    await withStackToken(ctx, 'app-roles-1', {}, async (added) => {
      tokens.push(added.VAULT_TOKEN);
      return 0;
    });
    expect(tokens).toEqual([undefined]);
    expect(lines).toEqual([`secretstore-iac pipeline plan: app-roles-1: the engine uses the job's token as it is: it carries neither pipeline role's policy (${ROLE}, secretstore-iac-plan): a root token or a person's token (on a laptop), not narrowed`]);
  });
});
