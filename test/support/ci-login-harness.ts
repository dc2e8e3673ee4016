/**
 * Runs the generated CI login script the way a CI job does: sourced by a minimal POSIX shell
 * (Debian's dash, and BusyBox sh with BusyBox awk/tr/wc as on Alpine images),
 * with a PATH holding only the tools a job image has (plus real clients a test names, e.g. skopeo),
 * a fake `docker` that records only whether it got a password on standard input, and a `curl`
 * wrapper that records its command line (to prove no token is passed on it). Shared by the unit tests (fake store) and the store test (real store).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { commandPath, requiredCommand } from './required-command';

/** A shell that runs the script. */
export interface JobShell {
  /** `dash` or `busybox`. */
  readonly name: string;
  /** Command that starts the shell (`-c <text>` follows). */
  readonly argv: readonly string[];
  /** Where awk, tr and wc come from: the host's (`host`) or BusyBox applets (`busybox`). */
  readonly tools: 'host' | 'busybox';
}

const which = commandPath;

// Looked up once, when a test file imports this module: a missing shell then fails one test of that
// file, naming the package to install, or is reported as skipped (test/support/required-command.ts).
const DASH = requiredCommand('dash', 'the CI login script tests under dash, as on Debian job images');
const BUSYBOX = requiredCommand('busybox', 'the CI login script tests under BusyBox sh, awk, tr and wc, as on Alpine job images');

/** The job shells: dash and BusyBox sh, less those missing here (each then fails or is reported skipped). */
export function jobShells(): JobShell[] {
  const shells: JobShell[] = [];
  if (DASH) shells.push({ name: 'dash', argv: [DASH], tools: 'host' });
  if (BUSYBOX) shells.push({ name: 'busybox', argv: [BUSYBOX, 'sh'], tools: 'busybox' });
  return shells;
}

/** Real curl of the host (the job image's curl). */
export const REAL_CURL = which('curl') ?? '/usr/bin/curl';

/** Options of {@link runJob}. */
export interface RunJobOptions {
  readonly shell: JobShell;
  /** The login script's text. */
  readonly script: string;
  /** The job's environment (nothing else is inherited). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Commands run before the script is sourced (e.g. `set -eu`). */
  readonly prelude?: string;
  /** Variables whose values are collected after the script, into {@link JobResult.vars} (not printed). */
  readonly collect?: readonly string[];
  /**
   * Put curl on PATH (false: an image without curl).
   * @default true
   */
  readonly withCurl?: boolean;
  /** Put a fake `apk` on PATH that "installs" curl (an Alpine image). */
  readonly withApk?: boolean;
  /** Exit code of the fake registry login command. @default 0 */
  readonly dockerExit?: number;
  /** Host commands put on the job's PATH besides the script's tools (`skopeo`: a real registry client). */
  readonly hostTools?: readonly string[];
  /** Commands written onto the job's PATH by name (script text), in place of the fakes (a `docker` that runs a real client). */
  readonly shims?: Readonly<Record<string, string>>;
  /** The job's own script, run after the login script is sourced (before the variables are collected). */
  readonly then?: string;
}

/** What one job run produced. */
export interface JobResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout and stderr: what the job log shows. */
  readonly log: string;
  /** Collected variables (undefined when unset). */
  readonly vars: Record<string, string | undefined>;
  /** Shell state after the script: flags (`$-`), leftover `_ss_` variables and functions. */
  readonly after: { flags: string; leftoverVariables: string[]; leftoverFunctions: boolean } | undefined;
  /** One line per curl call: its arguments. */
  readonly curlCalls: string[];
  /** One record per registry login call (fake docker/podman). */
  readonly registryLogins: { command: string; args: string[]; gotPassword: boolean; passwordMatches: boolean; usernameMatches: boolean }[];
  /** Arguments of each `apk` call. */
  readonly apkCalls: string[];
}

const FAKE_LOGIN = `#!/bin/sh
# Fake registry client: records only the shape of the call, whether a password arrived on standard
# input and whether it (and the username) equal the expected ones; never the values.
pw=$(cat; printf .)
pw=\${pw%.}
user=
prev=
target=
for a in "$@"; do
  [ "$prev" = --username ] && user=$a
  prev=$a
  target=$a
done
got=no; [ -n "$pw" ] && got=yes
pm=no; [ "$pw" = "\${FAKE_LOGIN_EXPECT_PASSWORD:-}" ] && pm=yes
um=no; [ "$user" = "\${FAKE_LOGIN_EXPECT_USERNAME:-}" ] && um=yes
shape=
for a in "$@"; do
  if [ "$a" = "$user" ]; then shape="$shape <username>"; else shape="$shape $a"; fi
done
printf '%s|%s|%s|%s|%s\\n' "$(basename "$0")" "$shape" "$got" "$pm" "$um" >> "$FAKE_LOGIN_LOG"
if [ "\${FAKE_LOGIN_EXIT:-0}" -ne 0 ]; then echo "Error response from daemon: login attempt failed" >&2; exit "$FAKE_LOGIN_EXIT"; fi
echo "Login Succeeded"
`;

/** Runs the script in a fresh job sandbox and returns what happened. */
export async function runJob(options: RunJobOptions): Promise<JobResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-ci-job-'));
  try {
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    const scriptFile = path.join(dir, 'secretstore-login.sh');
    fs.writeFileSync(scriptFile, options.script, { mode: 0o755 });
    const files = {
      curl: path.join(dir, 'curl.log'),
      login: path.join(dir, 'login.log'),
      apk: path.join(dir, 'apk.log'),
      result: path.join(dir, 'result'),
    };
    const link = (name: string, target: string) => fs.symlinkSync(target, path.join(bin, name));
    const write = (name: string, text: string) => fs.writeFileSync(path.join(bin, name), text, { mode: 0o755 });
    const busybox = options.shell.tools === 'busybox' ? options.shell.argv[0] : undefined;
    for (const tool of ['awk', 'cat', 'basename']) {
      link(tool, busybox ?? which(tool) ?? `/usr/bin/${tool}`);
    }
    const curlWrapper = `#!/bin/sh\nprintf '%s\\n' "$*" >> "${files.curl}"\nexec "${REAL_CURL}" "$@"\n`;
    if (options.withCurl ?? true) write('curl', curlWrapper);
    if (options.withApk) {
      write(
        'apk',
        `#!/bin/sh\nprintf '%s\\n' "$*" >> "${files.apk}"\ncase "$*" in *curl*) cat > "${bin}/curl" <<'EOF'\n${curlWrapper}EOF\n/bin/chmod 755 "${bin}/curl"; echo "OK: curl installed" ;; esac\n`,
      );
    }
    write('docker', FAKE_LOGIN);
    write('podman', FAKE_LOGIN);
    for (const tool of options.hostTools ?? []) link(tool, which(tool) ?? `/usr/bin/${tool}`);
    for (const [name, text] of Object.entries(options.shims ?? {})) write(name, text);

    const collect = options.collect ?? [];
    const text = [
      options.prelude ?? '',
      `. "${scriptFile}"`,
      options.then ?? '',
      `: > "${files.result}"`,
      `printf 'FLAGS\\0%s\\0' "$-" >> "${files.result}"`,
      'set +x',
      ...collect.map((n) => `if [ -n "\${${n}+set}" ]; then printf '%s\\0%s\\0' ${n} "$${n}" >> "${files.result}"; fi`),
      `printf 'LEFT\\0%s\\0' "$(set | awk -F= '/^_ss_/ { printf "%s ", $1 }')" >> "${files.result}"`,
      `if command -v _ss_main >/dev/null 2>&1; then printf 'FUNCS\\0yes\\0' >> "${files.result}"; fi`,
    ].join('\n');

    const env: Record<string, string> = { PATH: bin, HOME: dir, FAKE_LOGIN_LOG: files.login };
    if (options.dockerExit) env.FAKE_LOGIN_EXIT = String(options.dockerExit);
    for (const [k, v] of Object.entries(options.env)) if (v !== undefined) env[k] = v;

    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(options.shell.argv[0], [...options.shell.argv.slice(1), '-c', text], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (b: Buffer) => out.push(b));
      child.stderr.on('data', (b: Buffer) => err.push(b));
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.once('error', reject);
      child.once('close', (c) => {
        clearTimeout(timer);
        resolve({ code: c ?? 1, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
      });
    });

    const vars: Record<string, string | undefined> = Object.fromEntries(collect.map((n) => [n, undefined]));
    let after: JobResult['after'];
    if (fs.existsSync(files.result)) {
      const parts = fs.readFileSync(files.result, 'utf8').split('\0');
      after = { flags: '', leftoverVariables: [], leftoverFunctions: false };
      for (let i = 0; i + 1 < parts.length; i += 2) {
        const [k, v] = [parts[i], parts[i + 1]];
        if (k === 'FLAGS') after.flags = v;
        else if (k === 'LEFT') after.leftoverVariables = v.split(' ').filter(Boolean);
        else if (k === 'FUNCS') after.leftoverFunctions = true;
        else vars[k] = v;
      }
    }
    const lines = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : []);
    const registryLogins = lines(files.login).map((l) => {
      const [command, shape, got, pm, um] = l.split('|');
      return { command, args: shape.trim().split(' '), gotPassword: got === 'yes', passwordMatches: pm === 'yes', usernameMatches: um === 'yes' };
    });
    return { code, stdout, stderr, log: stdout + stderr, vars, after, curlCalls: lines(files.curl), registryLogins, apkCalls: lines(files.apk) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Asserts-by-return: the secret values (and each of their lines) that appear in a log. */
export function leakedValues(log: string, values: readonly string[]): string[] {
  const pieces = values.flatMap((v) => [v, ...v.split('\n')]).filter((p) => p.trim().length >= 6);
  return [...new Set(pieces.filter((p) => log.includes(p)))];
}

// ---- a fake store, for the unit tests -----------------------------------------------------------

/** Encodes like the store (Go's encoding/json): `<`, `>`, `&` as \u escapes. */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One recorded request. */
export interface FakeRequest {
  readonly method: string;
  readonly path: string;
  readonly token: string | undefined;
  readonly body: string;
}

/** A reply of the fake store. */
export interface FakeReply {
  readonly status: number;
  readonly body: string;
  readonly contentType?: string;
}

/**
 * An HTTP server that answers like the store's JWT login and KV v2 read endpoints: tests set the
 * login reply and the secrets (or a status per path), and read back the requests.
 */
export class FakeStore {
  static async start(): Promise<FakeStore> {
    const store = new FakeStore();
    await new Promise<void>((resolve) => store.server.listen(0, '127.0.0.1', resolve));
    const address = store.server.address();
    store.addr = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return store;
  }

  addr = '';
  readonly requests: FakeRequest[] = [];
  /** Token the default login reply hands out. */
  token = 's.FakeStoreToken0123456789abcdef';
  /** Login reply; default: a real-shaped success. */
  loginReply: FakeReply | undefined;
  /** KV v2 secrets by API path (`secret/data/x`), or a status for the path. */
  readonly secrets = new Map<string, Record<string, unknown> | number>();
  /** KV v1 secrets by API path. */
  readonly secretsV1 = new Map<string, Record<string, unknown>>();
  private readonly server = http.createServer((req, res) => this.handle(req, res));

  reset(): void {
    this.requests.length = 0;
    this.loginReply = undefined;
    this.secrets.clear();
    this.secretsV1.clear();
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const token = req.headers['x-vault-token'] as string | undefined;
      const p = (req.url ?? '').replace(/^\/v1\//, '');
      this.requests.push({ method: req.method ?? '', path: p, token, body });
      const reply = this.reply(req.method ?? '', p, token);
      res.writeHead(reply.status, { 'Content-Type': reply.contentType ?? 'application/json' });
      res.end(reply.body);
    });
  }

  private reply(method: string, p: string, token: string | undefined): FakeReply {
    const errors = (...messages: string[]) => goJson({ errors: messages }) + '\n';
    if (method === 'POST' && p === 'auth/jwt/login') {
      return (
        this.loginReply ?? {
          status: 200,
          body:
            goJson({
              request_id: 'f00', lease_id: '', renewable: false, lease_duration: 0, data: null, wrap_info: null, warnings: null,
              auth: {
                client_token: this.token, accessor: 'acc', policies: ['default', 'registry-ci'], token_policies: ['default', 'registry-ci'],
                metadata: { role: 'registry-ci' }, lease_duration: 900, renewable: true, entity_id: 'e', token_type: 'service', orphan: true,
                mfa_requirement: null, num_uses: 0,
              },
            }) + '\n',
        }
      );
    }
    if (method === 'GET') {
      if (token !== this.token) return { status: 403, body: errors('permission denied') };
      const v1 = this.secretsV1.get(p);
      if (v1) return { status: 200, body: goJson({ request_id: 'r', lease_id: '', renewable: false, lease_duration: 2764800, data: v1, wrap_info: null, warnings: null, auth: null }) + '\n' };
      const s = this.secrets.get(p);
      if (typeof s === 'number') return { status: s, body: s === 403 ? errors('1 error occurred:\n\t* permission denied\n\n') : errors() };
      if (!s) return { status: 404, body: errors() };
      return {
        status: 200,
        body:
          goJson({
            request_id: 'r', lease_id: '', renewable: false, lease_duration: 0,
            data: { data: s, metadata: { created_time: '2026-01-01T00:00:00Z', custom_metadata: null, deletion_time: '', destroyed: false, version: 3 } },
            wrap_info: null, warnings: null, auth: null,
          }) + '\n',
      };
    }
    return { status: 405, body: errors('unsupported operation') };
  }
}

/** A syntactically valid, unsigned JWT-shaped string (the fake store does not verify it). */
export function fakeJwt(claims: Record<string, unknown> = { aud: 'https://gitlab.acme.example' }): string {
  const b = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b({ alg: 'RS256', typ: 'JWT' })}.${b(claims)}.${Buffer.from('signature-bytes').toString('base64url')}`;
}
