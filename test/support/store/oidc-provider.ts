/**
 * Starts the real OpenID provider of oidc-provider-server.mjs (the `oidc-provider` library) on
 * 127.0.0.1 for a store test, and drives a person's single sign-on through the store's OIDC login
 * the way a browser does: plain HTTP calls, the provider's cookies kept, its redirects followed by
 * hand, its login form posted.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { RunningStore, storeRequest, StoreResponse } from './store-server';

/** A running OpenID provider. */
export interface RunningOidcProvider {
  /** `http://127.0.0.1:<port>`: issuer and discovery URL. */
  readonly issuer: string;
  /** Stops the provider process (by its pid) and waits for it to exit. */
  stop(): Promise<void>;
}

/** What the provider knows: its one client, and its people with their groups. */
export interface OidcProviderOptions {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUris: readonly string[];
  /** Login name → groups. */
  readonly accounts: Readonly<Record<string, readonly string[]>>;
}

/** Starts the provider; resolves once it prints its issuer. */
export async function startOidcProvider(options: OidcProviderOptions): Promise<RunningOidcProvider> {
  const script = path.join(__dirname, 'oidc-provider-server.mjs');
  const child: ChildProcess = spawn(process.execPath, [script], {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      OIDC_CLIENT_ID: options.clientId,
      OIDC_CLIENT_SECRET: options.clientSecret,
      OIDC_REDIRECT_URIS: JSON.stringify(options.redirectUris),
      OIDC_ACCOUNTS: JSON.stringify(options.accounts),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
  const issuer = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the OpenID provider did not start in 120 s\n${stderr}`)), 120_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString('utf8');
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line).issuer);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the OpenID provider exited with ${code}\n${stderr}`));
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    issuer,
    stop: async () => {
      if (child.exitCode === null && child.pid !== undefined) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The outcome of a person's single sign-on: the store's answer to the callback. */
export interface SsoLogin {
  /** The store's answer to `auth/<mount>/oidc/callback`. */
  readonly callback: StoreResponse;
}

/** A cookie jar by name (the provider's cookies are path-scoped; sending all of them is harmless). */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const header of res.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(header)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Logs `login` in through the store's OIDC method as a browser would: asks the store for the
 * authorization URL (`auth/<mount>/oidc/auth_url`, role and redirect URI), follows the provider's
 * redirects, posts its login form, and hands the code and state the provider redirects back with to
 * the store's callback (`auth/<mount>/oidc/callback`).
 */
export async function ssoLogin(store: RunningStore, options: { mount: string; role: string; login: string; redirectUri: string }): Promise<SsoLogin> {
  const start = await storeRequest(store, 'POST', `auth/${options.mount}/oidc/auth_url`, { role: options.role, redirect_uri: options.redirectUri }, null);
  const authUrl = (start.body as any)?.data?.auth_url;
  if (start.status !== 200 || typeof authUrl !== 'string' || authUrl === '') {
    throw new Error(`auth_url refused: HTTP ${start.status} ${JSON.stringify(start.body)}`);
  }
  const jar = new CookieJar();
  let url = authUrl;
  let form: { method: 'POST'; body: string } | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, {
      method: form?.method ?? 'GET',
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form?.body,
    });
    jar.take(res);
    form = undefined;
    const location = res.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.href.startsWith(options.redirectUri)) {
        // The provider sends the browser back to the redirect URI: the store's callback takes it from there.
        const params = next.searchParams;
        const query = new URLSearchParams({ state: params.get('state') ?? '', code: params.get('code') ?? '' });
        if (params.get('error')) throw new Error(`the provider refused: ${params.get('error')}: ${params.get('error_description')}`);
        const callback = await storeRequest(store, 'GET', `auth/${options.mount}/oidc/callback?${query}`, undefined, null);
        return { callback };
      }
      url = next.href;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (res.status !== 200 || !action) throw new Error(`unexpected provider answer at ${url}: HTTP ${res.status}: ${html.slice(0, 300)}`);
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1] ?? 'login';
    const fields: Record<string, string> = prompt === 'login' ? { prompt, login: options.login, password: 'any' } : { prompt };
    form = { method: 'POST', body: new URLSearchParams(fields).toString() };
  }
  throw new Error('the login did not come back to the redirect URI in 20 steps');
}
