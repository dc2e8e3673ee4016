/**
 * The generated CI login script logs in to a real registry (spec §4.1 flow 1 step 4, §2.1-2.2;
 * issue 47): Debian's `docker-registry` (distribution 2.8) with TLS and bcrypt htpasswd accounts on
 * the push and pull ports (test/support/store/registry-server.ts: two instances over one storage,
 * the pull one read-only), the platform synthesized with that registry's host and ports and applied
 * to the real store, the accounts' passwords written to `secret/registry/svc-*` (the library's KV
 * paths).
 *
 * - A CI job of `.secretstore-image-push` (dash and BusyBox sh, a job token the test signs) runs the
 *   generated script: JWT login, reads svc-orchestrator, logs in at the push port with
 *   `skopeo login --password-stdin` (the template lets the job choose its client through
 *   SECRETSTORE_REGISTRY_LOGIN_COMMAND, as it does for `podman login`; skopeo takes the same
 *   `--username U --password-stdin HOST:PORT`), then pushes an image (an OCI layout the test writes,
 *   no network) with the credentials that login stored. The template's default, `docker login`, is
 *   run too, through a `docker` shim on PATH that execs `skopeo login` with the same arguments.
 * - svc-deployer is not CI's (spec §2.3: cluster pods and VM deployment scripts; registry-ci gets 403
 *   on its path, checked here too). Its pull is run as a deployment script would: its credentials
 *   read from the store (with the store's root token: the library declares no reader for them), the
 *   same `skopeo login --password-stdin` at the pull port, a pull whose digest equals the pushed
 *   one, and a push to the pull port that the registry refuses.
 * - The store writes a file audit log: `usage` over it credits these jobs to `jwt/registry-ci`
 *   exactly (logins, the svc-orchestrator reads used, the svc-deployer read denied), issue 47.
 * - No password appears in any job's output or in the registry's logs. TLS is verified with the
 *   test CA everywhere (`--cert-dir`; never `--tls-verify=false`).
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as yaml from 'js-yaml';
import { jobShells, JobShell, leakedValues, runJob } from '../support/ci-login-harness';
import { requiredCommand } from '../support/required-command';
import { generateSigningKey, gitlabJobClaims, JwtSigningKey, signJwt } from '../support/store/jwt-signer';
import { PlatformFixture, TEST_SETTINGS, testPlatformConfig, writeKv2 } from '../support/store/platform-fixture';
import { REGISTRY_AVAILABLE, RegistryAccount, RunningRegistry, startRegistry } from '../support/store/registry-server';
import { RunningStore, storeRequest } from '../support/store/store-server';
import { startAuditedStore } from '../support/store/audit-device';
import { runStoreCli } from '../support/store/store-cli';

const SKOPEO = requiredCommand('skopeo', 'the registry login tests (skopeo login --password-stdin, push and pull)');

/** Passwords with characters a shell, JSON or HTTP basic auth could trip on (one line: htpasswd -i reads a line). */
const password = (who: string) => `pw ${who} $HOME 'q' "d" \\b &<x>:${createHash('sha256').update(`${who}${process.pid}${Date.now()}`).digest('hex').slice(0, 16)}`;

const ACCOUNTS: Record<'orchestrator' | 'deployer', RegistryAccount> = {
  orchestrator: { username: 'svc-orchestrator', password: password('orchestrator'), access: 'push' },
  deployer: { username: 'svc-deployer', password: password('deployer'), access: 'pull' },
};
const ALL_PASSWORDS = Object.values(ACCOUNTS).map((a) => a.password);

/** A minimal OCI image layout (one layer with one file) at `dir`, tag `tag`; returns its manifest digest. */
function writeOciLayout(dir: string, tag: string, work: string): string {
  const blobs = path.join(dir, 'blobs', 'sha256');
  fs.mkdirSync(blobs, { recursive: true });
  const blob = (data: Buffer) => {
    const hex = createHash('sha256').update(data).digest('hex');
    fs.writeFileSync(path.join(blobs, hex), data);
    return { digest: `sha256:${hex}`, size: data.length };
  };
  const src = path.join(work, `layer-${tag}`);
  fs.mkdirSync(src, { recursive: true });
  fs.writeFileSync(path.join(src, 'hello.txt'), `image ${tag} of the registry login test\n`);
  const tar = execFileSync('tar', ['-C', src, '-cf', '-', 'hello.txt']);
  const layer = blob(execFileSync('gzip', ['-n'], { input: tar }));
  const config = blob(
    Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: {}, rootfs: { type: 'layers', diff_ids: [`sha256:${createHash('sha256').update(tar).digest('hex')}`] } })),
  );
  const manifest = blob(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', ...layer }],
      }),
    ),
  );
  fs.writeFileSync(path.join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  fs.writeFileSync(
    path.join(dir, 'index.json'),
    JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...manifest, annotations: { 'org.opencontainers.image.ref.name': tag } }] }),
  );
  return manifest.digest;
}

/** The manifest digest of tag `tag` in an OCI layout. */
const layoutDigest = (dir: string, tag: string): string | undefined =>
  JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8')).manifests.find((m: any) => m.annotations?.['org.opencontainers.image.ref.name'] === tag)?.digest;

/** `NAME_RC=<exit status>` lines a job's script prints, by name. */
const exitCodes = (log: string): Record<string, number> =>
  Object.fromEntries([...log.matchAll(/^([A-Z_]+)_RC=(\d+)$/gm)].map((m) => [m[1], Number(m[2])]));

(REGISTRY_AVAILABLE && SKOPEO ? describe : describe.skip)('CI login script against a real registry (push and pull ports)', () => {
  let store: RunningStore;
  let registry: RunningRegistry;
  let fixture: PlatformFixture;
  let key: JwtSigningKey;
  let script: string;
  let doc: any;
  let work: string;
  let policy: string;
  let n = 0;
  /** image tag → manifest digest of the layout the test wrote and pushed. */
  const pushed: Record<string, string> = {};
  const jobLogs: string[] = [];

  const pushTarget = () => `${registry.host}:${registry.ports.push}`;
  const pullTarget = () => `${registry.host}:${registry.ports.pull}`;
  // Ground truth for the usage report of the store's audit log (the last test): one JWT login per job token.
  let jobLogins = 0;
  const jobToken = () =>
    ++jobLogins &&
    signJwt(key.privateKey, gitlabJobClaims({ aud: doc['.secretstore-login'].id_tokens.SECRETSTORE_ID_TOKEN.aud }, { ciUrl: TEST_SETTINGS.ciUrl }), { kid: key.kid });
  /** Where skopeo keeps a login's credentials: one file per run, as one job's (REGISTRY_AUTH_FILE). */
  const authFile = () => path.join(work, `auth-${++n}.json`);
  // Signatures are not what this test is about: accept any image (TLS is verified regardless).
  const copy = (src: string, dest: string, certs: 'src' | 'dest' | 'both') =>
    `skopeo copy --policy "${policy}"${certs !== 'dest' ? ` --src-cert-dir "${registry.certDir}"` : ''}${certs !== 'src' ? ` --dest-cert-dir "${registry.certDir}"` : ''} ${src} ${dest}`;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-registry-login-'));
    policy = path.join(work, 'policy.json');
    fs.writeFileSync(policy, JSON.stringify({ default: [{ type: 'insecureAcceptAnything' }] }));
    key = generateSigningKey();
    registry = await startRegistry(Object.values(ACCOUNTS));
    store = await startAuditedStore(path.join(work, 'audit.log'));
    fixture = PlatformFixture.create(store, 'registry-login');
    fixture.synthPlatform(testPlatformConfig(key.publicKeyPem, { settings: { ...TEST_SETTINGS, registryHost: registry.host, registryPorts: registry.ports } }));
    await fixture.apply();
    const ci = path.join(fixture.dir, 'cdktf.out', 'ci');
    script = fs.readFileSync(path.join(ci, 'secretstore-login.sh'), 'utf8');
    doc = yaml.load(fs.readFileSync(path.join(ci, 'secretstore-ci.gitlab-ci.yml'), 'utf8'));
    for (const a of Object.values(ACCOUNTS)) {
      await writeKv2(store, 'secret', `registry/${a.username}`, { username: a.username, password: a.password });
    }
  });

  afterAll(async () => {
    await registry?.stop();
    await store?.stop();
    fixture?.cleanup();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('the generated template logs in at the registry this test runs: push login of svc-orchestrator at its push port', () => {
    expect(doc['.secretstore-image-push'].variables.SECRETSTORE_REGISTRY_LOGIN).toBe(`${pushTarget()}=SVC_ORCHESTRATOR_USERNAME,SVC_ORCHESTRATOR_PASSWORD`);
  });

  /** Runs `.secretstore-<consumer>` under `shell` with skopeo as the login client, then `then`. */
  const ciJob = (shell: JobShell, consumer: string, then: string, env: Record<string, string> = {}) =>
    runJob({
      shell,
      script,
      hostTools: ['skopeo'],
      env: {
        ...doc['.secretstore-login'].variables,
        ...doc[`.secretstore-${consumer}`].variables,
        SECRETSTORE_ADDR: store.addr,
        SECRETSTORE_ID_TOKEN: jobToken(),
        SECRETSTORE_REGISTRY_LOGIN_COMMAND: `skopeo login --cert-dir ${registry.certDir}`,
        REGISTRY_AUTH_FILE: authFile(),
        ...env,
      },
      then,
    });

  describe.each(jobShells().map((s) => [s.name, s] as [string, JobShell]))('under %s', (name, shell) => {
    it('a CI job of .secretstore-image-push logs in as svc-orchestrator at the push port and pushes an image', async () => {
      const layout = path.join(work, `image-${name}`);
      pushed[name] = writeOciLayout(layout, name, work);
      const r = await ciJob(shell, 'image-push', `${copy(`oci:${layout}:${name}`, `docker://${pushTarget()}/platform/orchestrator:${name}`, 'dest')}\necho "PUSH_RC=$?"`);
      jobLogs.push(r.log);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining('ERROR') });
      expect(r.stdout).toContain('Login Succeeded!');
      expect(r.stdout).toContain(`secretstore: registry login at ${pushTarget()} as $SVC_ORCHESTRATOR_USERNAME (password on standard input)`);
      expect(exitCodes(r.log)).toEqual({ PUSH: 0 });
      expect(leakedValues(r.log, ALL_PASSWORDS)).toEqual([]);
    });

    it('svc-deployer (a deployment script, not CI) pulls that image from the pull port: same digest; its push there is refused', async () => {
      expect(pushed[name]).toMatch(/^sha256:/);
      const res = await storeRequest(store, 'GET', 'secret/data/registry/svc-deployer');
      expect(res.status).toBe(200);
      const { username, password: pw } = res.body.data.data;
      const out = path.join(work, `pulled-${name}`);
      const other = path.join(work, `other-${name}`);
      writeOciLayout(other, `${name}-other`, work);
      const r = await runJob({
        shell,
        script: ':',
        hostTools: ['skopeo'],
        env: { DEPLOYER_USERNAME: username, DEPLOYER_PASSWORD: pw, REGISTRY_AUTH_FILE: authFile() },
        then: [
          `printf '%s' "$DEPLOYER_PASSWORD" | skopeo login --cert-dir "${registry.certDir}" --username "$DEPLOYER_USERNAME" --password-stdin ${pullTarget()}`,
          'echo "LOGIN_RC=$?"',
          copy(`docker://${pullTarget()}/platform/orchestrator:${name}`, `oci:${out}:${name}`, 'src'),
          'echo "PULL_RC=$?"',
          copy(`oci:${other}:${name}-other`, `docker://${pullTarget()}/platform/deployer:${name}`, 'dest'),
          'echo "PUSH_RC=$?"',
        ].join('\n'),
      });
      jobLogs.push(r.log);
      const rc = exitCodes(r.log);
      expect(rc.LOGIN).toBe(0);
      expect(rc.PULL).toBe(0);
      expect(layoutDigest(out, name)).toBe(pushed[name]);
      expect(rc.PUSH).not.toBe(0);
      // distribution's read-only mode refuses the upload: HTTP 405.
      expect(r.stderr).toContain(`initiating layer upload to /v2/platform/deployer/blobs/uploads/ in ${pullTarget()}: StatusCode: 405, Method not allowed`);
      expect(leakedValues(r.log, ALL_PASSWORDS)).toEqual([]);
    });
  });

  it('the default login command, docker login, as the template writes it: a docker shim running skopeo login with the same arguments logs in', async () => {
    const [shell] = jobShells();
    // No docker daemon here: the shim checks the shape the script uses and hands the same arguments to skopeo.
    const docker = `#!/bin/sh\n[ "$1" = login ] || { echo "docker shim: only login" >&2; exit 64; }\nshift\nexec skopeo login --cert-dir "${registry.certDir}" "$@"\n`;
    const env = { ...doc['.secretstore-login'].variables, ...doc['.secretstore-image-push'].variables, SECRETSTORE_ADDR: store.addr, SECRETSTORE_ID_TOKEN: jobToken(), REGISTRY_AUTH_FILE: authFile() };
    expect(env.SECRETSTORE_REGISTRY_LOGIN_COMMAND).toBeUndefined();
    const r = await runJob({ shell, script, hostTools: ['skopeo'], shims: { docker }, env, then: `skopeo list-tags --cert-dir "${registry.certDir}" docker://${pushTarget()}/platform/orchestrator\necho "TAGS_RC=$?"` });
    jobLogs.push(r.log);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Login Succeeded!');
    expect(r.stdout).toContain(`secretstore: registry login at ${pushTarget()} as $SVC_ORCHESTRATOR_USERNAME (password on standard input)`);
    // The login's stored credentials let the job list the tags the jobs above pushed.
    expect(exitCodes(r.log)).toEqual({ TAGS: 0 });
    for (const s of jobShells()) expect(r.stdout).toContain(`"${s.name}"`);
    expect(leakedValues(r.log, ALL_PASSWORDS)).toEqual([]);
  });

  it('svc-deployer cannot log in at the push port (401 from the registry), and registry-ci may not read its secret (HTTP 403)', async () => {
    const [shell] = jobShells();
    const login = await runJob({
      shell,
      script: ':',
      hostTools: ['skopeo'],
      env: { DEPLOYER_USERNAME: ACCOUNTS.deployer.username, DEPLOYER_PASSWORD: ACCOUNTS.deployer.password, REGISTRY_AUTH_FILE: authFile() },
      then: `printf '%s' "$DEPLOYER_PASSWORD" | skopeo login --cert-dir "${registry.certDir}" --username "$DEPLOYER_USERNAME" --password-stdin ${pushTarget()}\necho "LOGIN_RC=$?"`,
    });
    jobLogs.push(login.log);
    expect(exitCodes(login.log).LOGIN).not.toBe(0);
    // skopeo's words for the registry's 401 (the registry's log shows the 401 itself, checked below).
    expect(login.stderr).toContain(`logging into \\"${pushTarget()}\\": invalid username/password`);
    const r = await ciJob(shell, 'image-push', 'echo "NEVER_RC=0"', {
      SECRETSTORE_READ: 'kv2:secret/data/registry/svc-deployer:password=SVC_DEPLOYER_PASSWORD,username=SVC_DEPLOYER_USERNAME',
      SECRETSTORE_REGISTRY_LOGIN: `${pullTarget()}=SVC_DEPLOYER_USERNAME,SVC_DEPLOYER_PASSWORD`,
    });
    jobLogs.push(r.log);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('HTTP 403 reading secret/data/registry/svc-deployer: path not in the policy of role registry-ci');
    expect(exitCodes(r.log)).toEqual({});
    expect(leakedValues(login.log + r.log, ALL_PASSWORDS)).toEqual([]);
  });

  it('svc-orchestrator cannot push through the pull port either: the port is read-only, not only the account', async () => {
    const [shell] = jobShells();
    const layout = path.join(work, 'image-pull-port');
    writeOciLayout(layout, 'pull-port', work);
    const r = await ciJob(shell, 'image-push', `${copy(`oci:${layout}:pull-port`, `docker://${pullTarget()}/platform/orchestrator:pull-port`, 'dest')}\necho "PUSH_RC=$?"`, {
      SECRETSTORE_REGISTRY_LOGIN: `${pullTarget()}=SVC_ORCHESTRATOR_USERNAME,SVC_ORCHESTRATOR_PASSWORD`,
    });
    jobLogs.push(r.log);
    expect(r.stdout).toContain(`secretstore: registry login at ${pullTarget()} as $SVC_ORCHESTRATOR_USERNAME`);
    expect(exitCodes(r.log).PUSH).not.toBe(0);
    expect(r.stderr).toContain(`initiating layer upload to /v2/platform/orchestrator/blobs/uploads/ in ${pullTarget()}: StatusCode: 405, Method not allowed`);
    expect(leakedValues(r.log, ALL_PASSWORDS)).toEqual([]);
  });

  it('a wrong password in the store: the real registry refuses the login and the script stops with its message', async () => {
    const [shell] = jobShells();
    await writeKv2(store, 'secret', 'registry/svc-orchestrator', { username: ACCOUNTS.orchestrator.username, password: `${ACCOUNTS.orchestrator.password}-old` });
    try {
      const r = await ciJob(shell, 'image-push', 'echo "NEVER_RC=0"');
      jobLogs.push(r.log);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`logging into \\"${pushTarget()}\\": invalid username/password`);
      expect(r.stderr).toContain(`secretstore: ERROR: registry login at ${pushTarget()} failed (skopeo login --cert-dir ${registry.certDir} exit 1)`);
      expect(exitCodes(r.log)).toEqual({});
      expect(leakedValues(r.log, [...ALL_PASSWORDS, `${ACCOUNTS.orchestrator.password}-old`])).toEqual([]);
    } finally {
      await writeKv2(store, 'secret', 'registry/svc-orchestrator', { username: ACCOUNTS.orchestrator.username, password: ACCOUNTS.orchestrator.password });
    }
  });

  it("the registry's own logs: svc-deployer never authorized on the push port, the pull port's 405s, no password", async () => {
    expect(jobLogs.length).toBeGreaterThanOrEqual(2 * jobShells().length + 4);
    expect(leakedValues(jobLogs.join('\n'), ALL_PASSWORDS)).toEqual([]);
    // The access log line of a request may be written after the client has its answer: wait for the last one.
    const lastRefusal = '"POST /v2/platform/orchestrator/blobs/uploads/ HTTP/1.1" 405 ';
    for (let i = 0; i < 600 && !registry.logs('pull').includes(lastRefusal); i++) await new Promise((r) => setTimeout(r, 100));
    const push = registry.logs('push');
    const pull = registry.logs('pull');
    const count = (text: string, needle: string) => text.split(needle).length - 1;
    expect(count(pull, '"POST /v2/platform/deployer/blobs/uploads/ HTTP/1.1" 405 ')).toBe(jobShells().length);
    expect(count(pull, lastRefusal)).toBe(1);
    expect(pull).toContain('auth.user.name=svc-deployer');
    // svc-deployer is never authorized on the push port (its login there was refused above).
    expect(push).not.toContain('auth.user.name=svc-deployer');
    expect(push).toContain('auth.user.name=svc-orchestrator');
    expect(push).not.toMatch(/"(?:POST|PUT|PATCH) [^"]*" 405 /);
    expect(leakedValues(push + pull, ALL_PASSWORDS)).toEqual([]);
  });
  it("the store's audit log of these jobs, read by usage: registry-ci's logins, its reads of svc-orchestrator (used) and of svc-deployer (denied) are the jobs' own; the deployment script's root-token reads are no identity's; no password", async () => {
    const run = await runStoreCli(['usage', path.join(fixture.dir, 'cdktf.out'), '--log', path.join(work, 'audit.log'), '--format', 'json'], { cwd: work, addr: store.addr });
    expect(run.stderr).toBe('');
    const report = JSON.parse(run.stdout);
    const ci = report.identities.find((u: any) => u.identity === 'jwt/registry-ci');
    expect(ci.logins).toBe(jobLogins);
    const used = ci.used.filter((g: any) => !(g.policies.length === 1 && g.policies[0] === 'default')).flatMap((g: any) => g.operations.map((op: string) => [`${g.rule} ${op}`, g.count]));
    // Every job read svc-orchestrator but the one that asked for svc-deployer's secret instead.
    expect(used).toEqual([['secret/data/registry/svc-orchestrator read', jobLogins - 1]]);
    expect(ci.denied.map((d: any) => [`${d.path} ${d.operation}`, d.count])).toEqual([['secret/data/registry/svc-deployer read', 1]]);
    // svc-deployer's credentials were read with the root token (a deployment script's stand-in): credited to no declared identity.
    for (const u of report.identities) if (u.identity !== 'jwt/registry-ci') expect([u.identity, u.logins, u.used.length, u.denied.length]).toEqual([u.identity, 0, 0, 0]);
    expect(leakedValues(run.stdout, ALL_PASSWORDS)).toEqual([]);
  });
});
