/**
 * `npm run demo`: from a fresh clone to both stacks applied to a local dev store, a CI job logging in
 * with a signed job token and reading its secrets, and an application's agent rendering its `.env`.
 * Everything runs on 127.0.0.1 in a temp dir, which is removed (and the store and agent stopped) on
 * exit, whatever happened. No secret value is printed: tokens, Secret IDs and secret values never
 * reach the output.
 */
import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { JwtKeySource, SecretStoreApp } from '../lib';
import { runCli } from '../lib/cli/run-cli';
import { definePlatform } from '../lib/platform/platform';
import { startLocalDevStore, toolchain, waitFor } from './local-dev-store';
import { PlatformConfig } from '../lib/platform/platform-config';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'bin', 'secretstore-iac.js');
const children: ChildProcess[] = [];
let work = '';
let step = 0;

/** One numbered step: what it does and what it proves. */
function say(what: string, proves: string): void {
  console.log(`\n[demo ${++step}] ${what}\n         proves: ${proves}`);
}

function cleanup(): void {
  for (const child of children) if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGTERM');
  if (work) fs.rmSync(work, { recursive: true, force: true });
}

/** Runs a command; its output is shown only when it fails (and never holds a secret: see callers). */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, quiet = true): string {
  const r = spawnSync(cmd, args, { cwd: work, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${path.basename(cmd)} ${args.slice(0, 3).join(' ')} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  if (!quiet) process.stdout.write(r.stdout);
  return r.stdout;
}

async function store(addr: string, token: string | undefined, method: string, p: string, body?: unknown): Promise<any> {
  const response = await fetch(`${addr}/v1/${p}`, {
    method,
    headers: { ...(token ? { 'x-vault-token': token } : {}), 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${p}: HTTP ${response.status}`);
  return text ? JSON.parse(text) : {};
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

async function main(): Promise<void> {
  const tools = toolchain();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-demo-'));
  fs.chmodSync(work, 0o700);

  say('start a local OpenBao dev server on a free 127.0.0.1 port', 'the toolchain built by scripts/toolchain.sh runs a real store');
  const { addr, rootToken, process: bao } = await startLocalDevStore(work, tools.SECRETSTORE_IAC_BAO);
  children.push(bao);
  console.log(`         store at ${addr} (root token kept in memory only)`);

  say('generate a test CI key pair and write a local configuration', 'a CI key source needs only a public key: no CI server is contacted');
  const keys = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicKeyPem = keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const ciUrl = 'https://127.0.0.1:9443';
  const configFile = path.join(work, 'demo-config.json');
  fs.writeFileSync(configFile, JSON.stringify({ organisation: 'acme', ciUrl, registryHost: 'registry.acme.example', ciPublicKeys: [publicKeyPem] }, null, 2));
  const agentDir = path.join(work, 'agent');
  const outdir = path.join(work, 'cdktf.out');
  const local = JSON.parse(fs.readFileSync(configFile, 'utf8'));
  const config: PlatformConfig = {
    settings: { organisation: local.organisation, ciUrl: local.ciUrl, registryHost: local.registryHost, registryPorts: { push: 8443, pull: 8444 } },
    ciKeySource: JwtKeySource.publicKeys(local.ciPublicKeys),
    agents: {
      paths: {
        configFile: path.join(outdir, 'agents', 'orchestrator-dev', 'agent.hcl'),
        templateFile: path.join(outdir, 'agents', 'orchestrator-dev', 'env.ctmpl'),
        roleIdFile: path.join(agentDir, 'auth', 'role-id'),
        secretIdFile: path.join(agentDir, 'auth', 'secret-id'),
        envFile: path.join(agentDir, 'secrets', '.env'),
      },
      renewalLoop: false,
    },
  };
  console.log(`         ${configFile}: organisation acme, CI URL ${ciUrl}, the public key as JwtKeySource.publicKeys`);

  say('synthesize both stacks into a temp dir', 'the configuration passes every rule of the library');
  const app = new SecretStoreApp({ outdir }).define((a) => definePlatform(a, config));
  app.synth();
  for (const f of ['stacks/ci-access/cdk.tf.json', 'stacks/app-roles/cdk.tf.json', 'agents/orchestrator-dev/entrypoint.sh']) console.log(`         ${path.relative(work, path.join(outdir, f))}`);

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: work,
    SECRETSTORE_ADDR: addr,
    VAULT_TOKEN: rootToken,
    TF_IN_AUTOMATION: '1',
    ...tools,
  };
  for (const stack of ['ci-access', 'app-roles']) {
    say(`apply ${stack} with secretstore-iac tf (OpenTofu from the toolchain)`, `the ${stack} stack applies to a real store`);
    run(process.execPath, [CLI, 'tf', stack, '--outdir', outdir, '--', 'init', '-input=false'], env);
    run(process.execPath, [CLI, 'tf', stack, '--outdir', outdir, '--', 'apply', '-auto-approve', '-input=false'], env);
    console.log('         applied');
  }

  say('write test values for the CI secrets and the application', 'the declared paths exist under secret/ (KV v2)');
  const value = () => crypto.randomBytes(12).toString('hex');
  await store(addr, rootToken, 'POST', 'secret/data/registry/svc-orchestrator', { data: { username: 'svc-orchestrator', password: value() } });
  await store(addr, rootToken, 'POST', 'secret/data/orchestrator/e2e-test-user', { data: { username: 'e2e', password: value() } });
  const app_ = await store(addr, rootToken, 'GET', 'sys/policies/acl?list=true');
  // The application's paths and keys, as its agent template reads them.
  const template = fs.readFileSync(path.join(outdir, 'agents', 'orchestrator-dev', 'env.ctmpl'), 'utf8');
  const appSecrets = new Map<string, Set<string>>();
  for (const block of template.split(/\{\{-?\s*with secret "/).slice(1)) {
    const secretPath = block.slice(0, block.indexOf('"'));
    const keysRead = [...block.split(/\{\{-?\s*end/)[0].matchAll(/\.Data\.data\.([A-Za-z0-9_]+)/g)].map((m) => m[1]);
    appSecrets.set(secretPath, new Set([...(appSecrets.get(secretPath) ?? []), ...keysRead]));
  }
  for (const [secretPath, keysRead] of appSecrets) {
    await store(addr, rootToken, 'POST', secretPath, { data: Object.fromEntries([...keysRead].map((k) => [k, value()])) });
  }
  console.log(`         ${2 + appSecrets.size} secrets written (${(app_.data?.keys ?? []).length} policies in the store)`);

  say('sign a job token with the test private key and log in as registry-ci', 'the store trusts the CI key and the role\'s bound claims (spec §4.1 flow 1)');
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: ciUrl, aud: ciUrl, sub: 'project_path:acme/platform/orchestrator:ref_type:branch:ref:main', iat: now, nbf: now - 5, exp: now + 300, namespace_path: 'acme', project_path: 'acme/platform/orchestrator', project_id: '42', ref: 'main', ref_type: 'branch', ref_protected: 'true', job_id: '1' };
  const unsigned = `${b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  const jwt = `${unsigned}.${b64url(crypto.sign('sha256', Buffer.from(unsigned), keys.privateKey))}`;
  const login = await store(addr, undefined, 'POST', 'auth/jwt/login', { role: 'registry-ci', jwt });
  const jobToken: string = login.auth.client_token;
  console.log(`         logged in: policies ${login.auth.policies.join(', ')}, TTL ${login.auth.lease_duration} s`);

  say('read the job\'s secrets with the job token', 'registry-ci reads what the spec grants it (§2.3)');
  for (const p of ['secret/data/registry/svc-orchestrator', 'secret/data/orchestrator/e2e-test-user']) {
    const read = await store(addr, jobToken, 'GET', p);
    console.log(`         read ${p}: keys ${Object.keys(read.data.data).sort().join(', ')} (values not shown)`);
  }

  say('provision orchestrator-dev (secretstore-iac provision)', 'a Role ID and a fresh Secret ID reach an env file of mode 0600 (spec §4.1 flow 3)');
  const envFile = path.join(work, 'orchestrator-dev.env');
  // In-process, as every other step of the demo talks to the store (`--credentials-file`, unlike the
  // older `--env-file`, is no option of node's: the bin could be spawned with it too).
  const said: string[] = [];
  const code = await runCli(['provision', 'orchestrator-dev', '--credentials-file', envFile], { env, cwd: work, isTerminal: false, stdout: (l) => said.push(l), stderr: (l) => said.push(l) });
  if (code !== 0) throw new Error(`secretstore-iac provision failed (exit ${code}): ${said.join('\n')}`);
  console.log(`         ${path.relative(work, envFile)}: mode ${(fs.statSync(envFile).mode & 0o777).toString(8)}`);

  say('run the orchestrator-dev agent (entrypoint.sh with the built bao) until .env is rendered', 'the application gets its secrets through the agent (spec §4.1 flow 2)');
  const provisioned: Record<string, string> = {};
  for (const line of fs.readFileSync(envFile, 'utf8').split('\n')) {
    const m = /^(SECRETSTORE_[A-Z_]+)=(.*)$/.exec(line);
    if (m) provisioned[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
  }
  fs.mkdirSync(path.join(agentDir, 'auth'), { recursive: true, mode: 0o700 });
  fs.mkdirSync(path.join(agentDir, 'secrets'), { recursive: true, mode: 0o700 });
  const agentLog = fs.openSync(path.join(work, 'agent.log'), 'w', 0o600);
  const agent = spawn('sh', [path.join(outdir, 'agents', 'orchestrator-dev', 'entrypoint.sh')], {
    cwd: agentDir,
    env: { PATH: process.env.PATH, HOME: agentDir, SECRETSTORE_ADDR: addr, SECRETSTORE_AGENT_BINARY: tools.SECRETSTORE_IAC_BAO, ...provisioned },
    stdio: ['ignore', agentLog, agentLog],
  });
  children.push(agent);
  const rendered = path.join(agentDir, 'secrets', '.env');
  const names = await waitFor('the rendered .env', () => {
    // The agent logs no token or secret value; its last lines say why it stopped.
    if (agent.exitCode !== null) throw new Error(`the agent exited (${agent.exitCode}):\n${fs.readFileSync(path.join(work, 'agent.log'), 'utf8').split('\n').slice(-15).join('\n')}`);
    return fs.existsSync(rendered) && fs.statSync(rendered).size > 0 ? fs.readFileSync(rendered, 'utf8').split('\n').map((l) => l.split('=')[0]).filter(Boolean) : undefined;
  });
  console.log(`         .env rendered with ${names.join(', ')} (values not shown)`);

  say('stop the agent and the store, remove the temp dir', 'nothing is left running or on disk');
}

process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));
main().then(
  () => {
    cleanup();
    console.log('\ndemo: done');
  },
  (error: Error) => {
    cleanup();
    console.error(`\ndemo: failed at step ${step}: ${error.message}`);
    process.exit(1);
  },
);
