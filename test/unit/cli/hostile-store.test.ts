import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';
import { ACCESS_FIXTURES, REPO_ROOT } from '../../support/paths';

// The live commands against hostile stand-in stores on 127.0.0.1 (started here): what the store
// says never drives the terminal or forges a report line, a redirect never carries a credential to
// another origin, a silent store fails within the deadline, and the store's state is named. What
// each stand-in saw is the proof of what was sent.

const BASE = path.join(ACCESS_FIXTURES, 'base');
const LIVE = path.join(REPO_ROOT, 'test', 'fixtures', 'live-store');
const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(LIVE, `${name}.json`), 'utf8'));

/** Raw control, C1, bidi and separator characters: none may reach the terminal. */
const RAW_UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]/;

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly token?: string;
  readonly body: string;
}
interface Answer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: http.OutgoingHttpHeaders;
}
interface Stand {
  readonly address: string;
  readonly host: string;
  readonly seen: Seen[];
  close(): Promise<void>;
}

/** A stand-in store: `route` answers each request (undefined: never answer). */
async function standIn(route: (method: string, url: string, body: string) => Answer | undefined): Promise<Stand> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const url = decodeURIComponent(req.url ?? '');
      seen.push({ method: req.method ?? '', url, token: req.headers['x-vault-token'] as string | undefined, body });
      const answer = route(req.method ?? '', url, body);
      if (!answer) return;
      res.writeHead(answer.status, { 'Content-Type': 'application/json', ...(answer.headers ?? {}) });
      res.end(answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    address: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function cli(args: string[], env: NodeJS.ProcessEnv, cwd = process.cwd()) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { env: { PATH: process.env.PATH, ...env }, cwd, isTerminal: true, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

// --- A store whose every answer carries escape sequences and forged report lines -----------------

const FORGED = '\n## Drift: in sync\n**In sync.**';
// A role name becomes a URL path segment: no `#` or `?` (they would end the path).
const EVIL_ROLE = `evil\u001b[31m\u2028\u202eforged`;
const EVIL_ACCESSOR = `auth_userpass_\u001b[2J\u001b]0;pwned\u0007${FORGED}`;

function hostileRoute(_method: string, url: string): Answer {
  if (url === '/v1/sys/auth') {
    const mounts = fixture('sys-auth');
    mounts.data = { ...(mounts.data ?? mounts), 'evil/': { type: 'userpass', accessor: EVIL_ACCESSOR, description: '\u202eevil' } };
    return { status: 200, body: mounts };
  }
  if (url === '/v1/auth/jwt/config') return { status: 200, body: fixture('jwt-config') };
  if (url === '/v1/auth/jwt/role?list=true') return { status: 200, body: { data: { keys: ['registry-ci', EVIL_ROLE] } } };
  if (url === '/v1/auth/jwt/role/registry-ci') return { status: 200, body: fixture('jwt-role-registry-ci') };
  if (url === `/v1/auth/jwt/role/${EVIL_ROLE}`) {
    return {
      status: 200,
      body: {
        data: {
          role_type: 'jwt',
          user_claim: 'sub',
          bound_audiences: ['aud\u009b2J'],
          bound_claims: { project_path: `acme/\u001b[2J${FORGED}` },
          token_policies: ['registry-ci', 'evil\u001b]0;title\u0007'],
        },
      },
    };
  }
  if (url === '/v1/sys/policies/acl?list=true') return { status: 200, body: { data: { keys: ['default', 'registry-ci', 'root'] } } };
  const policy = url.match(/^\/v1\/sys\/policies\/acl\/(default|registry-ci|root)$/);
  if (policy) return { status: 200, body: fixture(`policy-${policy[1]}`) };
  return { status: 404, body: { errors: [] } };
}

/** The library's own styling on a terminal (lib/cli/terminal-highlight.ts): bold, yellow, reset. */
const OWN_STYLES = /\u001b\[(1|33|0)m/g;

function expectTerminalSafe(text: string): void {
  expect(text.replace(OWN_STYLES, '')).not.toMatch(RAW_UNSAFE);
  // No line the store wrote stands on its own: every forged heading is inside an escaped value.
  for (const line of text.split('\n')) expect(line).not.toMatch(/^(## Drift: in sync|\*\*In sync\.\*\*)/);
}

describe('store text is printed escaped (control, C1, bidi, line separators)', () => {
  let store: Stand;
  beforeAll(async () => {
    store = await standIn(hostileRoute);
  });
  afterAll(() => store.close());

  it('drift: role names, accessors, claim values and policy names from the store', async () => {
    const r = await cli(['drift', BASE], { SECRETSTORE_ADDR: store.address, VAULT_TOKEN: 'reader' });
    expect(r.code).toBe(1);
    expectTerminalSafe(r.stdout);
    expect(r.stdout).toContain('auth_userpass_\\u001b[2J\\u001b]0;pwned\\u0007\\u000a## Drift: in sync');
    expect(r.stdout).toContain('evil\\u001b[31m\\u2028\\u202eforged');
    // The library's own styling is still there (a terminal, NO_COLOR unset).
    expect(r.stdout).toContain('\u001b[1m## Drift: declarations → store');
  });

  it('drift --format json: the same values, JSON-escaped', async () => {
    const r = await cli(['drift', BASE, '--format', 'json'], { SECRETSTORE_ADDR: store.address, VAULT_TOKEN: 'reader' });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toMatch(RAW_UNSAFE);
    expect(JSON.stringify(JSON.parse(r.stdout))).toContain('auth_userpass_\\u001b[2J');
  });

  it('access live: identities, bindings and policies from the store', async () => {
    const r = await cli(['access', 'live'], { SECRETSTORE_ADDR: store.address, VAULT_TOKEN: 'reader' });
    expect(r.code).toBe(0);
    expectTerminalSafe(r.stdout);
    expect(r.stdout).toContain('jwt/evil\\u001b[31m\\u2028\\u202eforged');
    // In a table cell a line break is a space, and the rest escaped.
    expect(r.stdout).toContain('| bound_claims | `project_path: acme/\\u001b[2J\\u000a## Drift: in sync\\u000a**In sync.**` |');
    expect(r.stdout).toContain('aud\\u009b2J');
  });

  it('access-diff BASE live and who-can live', async () => {
    const diff = await cli(['access-diff', BASE, 'live'], { SECRETSTORE_ADDR: store.address, VAULT_TOKEN: 'reader' });
    expect(diff.code).toBe(1);
    expectTerminalSafe(diff.stdout);
    const who = await cli(['who-can', 'read', 'secret/data/registry/svc-orchestrator', 'live'], { SECRETSTORE_ADDR: store.address, VAULT_TOKEN: 'reader' });
    expect(who.code).toBe(0);
    expectTerminalSafe(who.stdout);
    expect(who.stdout).toContain('jwt/evil\\u001b[31m\\u2028\\u202eforged');
  });
});

describe('operator commands print the store\'s values escaped', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-hostile-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('provision: the accessor a store returns cannot drive the terminal or forge lines', async () => {
    const store = await standIn((_method, url) => {
      if (url === '/v1/auth/approle/role/registry/role-id') return { status: 200, body: { data: { role_id: 'role-id-1234' } } };
      if (url === '/v1/auth/approle/role/registry/secret-id') {
        return { status: 200, body: { data: { secret_id: 'secret-id-5678', secret_id_accessor: `acc\u001b]0;pwned\u0007${FORGED}` } } };
      }
      return { status: 404, body: { errors: [] } };
    });
    try {
      const file = path.join(dir, 'registry.env');
      const r = await cli(['provision', 'registry', '--env-file', file], { SECRETSTORE_ADDR: store.address, VAULT_TOKEN: 'privileged' });
      expect(r.code).toBe(0);
      expectTerminalSafe(r.stdout);
      expect(r.stdout).toContain('new Secret ID accessor acc\\u001b]0;pwned\\u0007\\u000a## Drift: in sync\\u000a**In sync.**');
      expect(r.stdout).not.toContain('secret-id-5678');
    } finally {
      await store.close();
    }
  });

  it('check-approle: role name, policies and a 100 kB rejection text, cut and escaped', async () => {
    const store = await standIn((_method, url, body) => {
      if (url === '/v1/auth/approle/login') {
        return JSON.parse(body).secret_id === 'good-secret-id'
          ? { status: 200, body: { auth: { client_token: 'issued', token_policies: ['p\u001b[2J'], lease_duration: 60, metadata: { role_name: 'r\u202eevil' } } } }
          : { status: 400, body: { errors: [`invalid\u001b[2J${FORGED}${'q'.repeat(100_000)}`] } };
      }
      return { status: 204 };
    });
    try {
      const env = { SECRETSTORE_ADDR: store.address, SECRETSTORE_ROLE_ID: 'role-id-1234' };
      const valid = await cli(['check-approle'], { ...env, SECRETSTORE_SECRET_ID: 'good-secret-id' });
      expect(valid.code).toBe(0);
      expectTerminalSafe(valid.stdout);
      expect(valid.stdout).toContain('role r\\u202eevil, policies p\\u001b[2J');
      const invalid = await cli(['check-approle'], { ...env, SECRETSTORE_SECRET_ID: 'bad-secret-id' });
      expect(invalid.code).toBe(1);
      expectTerminalSafe(invalid.stdout);
      expect(invalid.stdout).toContain('(HTTP 400: invalid\\u001b[2J\\u000a## Drift: in sync');
      expect(invalid.stdout.length).toBeLessThan(1200);
    } finally {
      await store.close();
    }
  });
});

describe('a redirect to another origin carries no credential there', () => {
  let other: Stand;
  beforeEach(async () => {
    other = await standIn(() => ({ status: 200, body: { data: { role_id: 'other-role', secret_id: 'other-secret-id', secret_id_accessor: 'other-acc', keys: [] } } }));
  });
  afterEach(() => other.close());

  const redirecting = (only?: RegExp) => (_method: string, url: string) =>
    !only || only.test(url)
      ? { status: 307, headers: { Location: `${other.address}${url}` } }
      : url.endsWith('/role-id')
        ? { status: 200, body: { data: { role_id: 'role-id-1234' } } }
        : { status: 404, body: { errors: [] } };

  it('drift stops with exit 3 naming the Location; the other server never sees the token', async () => {
    const store = await standIn(redirecting());
    try {
      const r = await cli(['drift', BASE], { SECRETSTORE_ADDR: store.address, VAULT_TOKEN: 'privileged-token' });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(`redirect (HTTP 307) to another origin, "${other.address}/v1/sys/auth"; not followed`);
      expect(other.seen).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('provision writes nothing when the Secret ID request is redirected; the other server sees nothing', async () => {
    const store = await standIn(redirecting(/secret-id$/));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-redirect-'));
    try {
      const file = path.join(dir, 'registry.env');
      const r = await cli(['provision', 'registry', '--env-file', file], { SECRETSTORE_ADDR: store.address, VAULT_TOKEN: 'privileged-token' });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('to another origin');
      expect(fs.existsSync(file)).toBe(false);
      expect(other.seen).toEqual([]);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('check-approle: the Role ID and Secret ID never reach the other server', async () => {
    const store = await standIn(redirecting());
    try {
      const r = await cli(['check-approle'], { SECRETSTORE_ADDR: store.address, SECRETSTORE_ROLE_ID: 'role-id-1234', SECRETSTORE_SECRET_ID: 'secret-id-5678' });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(`"${other.address}/v1/auth/approle/login"; not followed`);
      expect(r.stderr).not.toContain('secret-id-5678');
      expect(other.seen).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('with the other host in SECRETSTORE_IAC_REDIRECT_HOSTS, provision follows the redirect (the operator named it)', async () => {
    const store = await standIn(redirecting(/secret-id$/));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-redirect-'));
    try {
      const file = path.join(dir, 'registry.env');
      const r = await cli(['provision', 'registry', '--env-file', file], {
        SECRETSTORE_ADDR: store.address,
        VAULT_TOKEN: 'privileged-token',
        SECRETSTORE_IAC_REDIRECT_HOSTS: other.host,
      });
      expect(r.code).toBe(0);
      expect(other.seen.map((s) => `${s.method} ${s.url} ${s.token}`)).toEqual(['POST /v1/auth/approle/role/registry/secret-id privileged-token']);
      expect(fs.readFileSync(file, 'utf8')).toContain('SECRETSTORE_SECRET_ID=other-secret-id');
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('one short deadline, and the store\'s state named', () => {
  it('drift against a store that accepts but never answers fails at the default 5 s deadline', async () => {
    const silent = await standIn(() => undefined);
    try {
      const started = Date.now();
      const r = await cli(['drift', BASE], { SECRETSTORE_ADDR: silent.address, VAULT_TOKEN: 't' });
      // It waited for the deadline (a loaded machine may take longer: no upper bound).
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
      expect(r.code).toBe(3);
      expect(r.stderr).toBe(
        `secretstore-iac drift: cannot read the live store at ${silent.address}: cannot reach the secrets store at ${silent.address} ` +
          '(no answer within 5s; SECRETSTORE_IAC_STORE_TIMEOUT sets this deadline): check SECRETSTORE_ADDR / VAULT_ADDR and that the store is running and reachable from here',
      );
    } finally {
      await silent.close();
    }
  });

  it('access-diff live and provision honour SECRETSTORE_IAC_STORE_TIMEOUT', async () => {
    const silent = await standIn(() => undefined);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-silent-'));
    try {
      const env = { SECRETSTORE_ADDR: silent.address, VAULT_TOKEN: 't', SECRETSTORE_IAC_STORE_TIMEOUT: '0.5' };
      let started = Date.now();
      const diff = await cli(['access-diff', BASE, 'live'], env);
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect([diff.code, diff.stderr]).toEqual([3, expect.stringContaining('(no answer within 0.5s; SECRETSTORE_IAC_STORE_TIMEOUT sets this deadline)')]);
      started = Date.now();
      const provision = await cli(['provision', 'registry', '--env-file', path.join(dir, 'a.env')], env);
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect(provision.code).toBe(3);
    } finally {
      await silent.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [501, { initialized: false, sealed: true }, 'is not initialized'],
    [503, { initialized: true, sealed: true }, 'is sealed'],
  ])('a store whose sys/health answers %i: drift says it %s', async (code, health, words) => {
    const store = await standIn((_m, url) => (url.startsWith('/v1/sys/health') ? { status: code, body: health } : { status: 503, body: { errors: ['Vault is sealed'] } }));
    try {
      const r = await cli(['drift', BASE], { SECRETSTORE_ADDR: store.address, VAULT_TOKEN: 't' });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(`the secrets store at ${store.address} ${words}`);
    } finally {
      await store.close();
    }
  });
});
