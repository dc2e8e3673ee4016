/**
 * The CI login template (spec §4.1 flow 1, §2.4a, §5.1, §5.5, §5.8): the GitLab CI file and the
 * login script written at synthesis, derived from the platform's declarations.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  CiJwtAuth,
  CiJwtRole,
  CiSecret,
  JwtKeySource,
  PlatformSettings,
  RegistryServiceAccount,
  SecretStoreApp,
  SecretStoreStack,
  SecretStoreValidationError,
} from '../../../lib';
import { CiLoginTemplate } from '../../../lib/constructs/ci-login-template';
import { definePlatform, Platform } from '../../../lib/platform/platform';
import { PlatformConfig } from '../../../lib/platform/platform-config';
import { platformConfig } from '../../support/platform-config';
import { jobShells } from '../../support/ci-login-harness';
import * as yaml from 'js-yaml';
import { renderPolicyHcl } from '../../../lib/render/policy-hcl';

const parseYaml = (text: string): any => yaml.load(text);

const TEMPLATE = 'ci/secretstore-ci.gitlab-ci.yml';
const SCRIPT = 'ci/secretstore-login.sh';

function synth(extend?: (p: Platform, app: SecretStoreApp) => void, config: PlatformConfig = platformConfig) {
  const outdir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-unit-')), 'cdktf.out');
  const app = new SecretStoreApp({ outdir });
  const platform = definePlatform(app, config);
  extend?.(platform, app);
  app.synth();
  const read = (p: string) => fs.readFileSync(path.join(outdir, p), 'utf8');
  return { outdir, platform, app, yamlText: read(TEMPLATE), script: read(SCRIPT), doc: parseYaml(read(TEMPLATE)) };
}

function problemsOf(extend: (p: Platform, app: SecretStoreApp) => void): string[] {
  try {
    synth(extend);
  } catch (e) {
    if (e instanceof SecretStoreValidationError) return e.problems.map((p) => `[${p.constructPath}] ${p.message}`);
    throw e;
  }
  return [];
}

const ORCH_READ = 'kv2:secret/data/registry/svc-orchestrator:password=SVC_ORCHESTRATOR_PASSWORD,username=SVC_ORCHESTRATOR_USERNAME';
const ORCH_LOGIN = 'registry.acme.example:8443=SVC_ORCHESTRATOR_USERNAME,SVC_ORCHESTRATOR_PASSWORD';

describe('CiLoginTemplate artifacts of the platform', () => {
  const result = synth();

  it('writes the GitLab CI file and the standalone login script (executable) next to the stacks', () => {
    expect(fs.statSync(path.join(result.outdir, TEMPLATE)).mode & 0o777).toBe(0o644);
    expect(fs.statSync(path.join(result.outdir, SCRIPT)).mode & 0o777).toBe(0o755);
    expect(fs.existsSync(path.join(result.outdir, 'stacks', 'ci-access', 'cdk.tf.json'))).toBe(true);
  });

  it('parses as YAML and holds only hidden jobs, so that including it adds no job', () => {
    expect(Object.keys(result.doc).every((k) => k.startsWith('.'))).toBe(true);
  });

  it('declares the ID token SECRETSTORE_ID_TOKEN with aud = the CI URL in the base job (spec §2.4a)', () => {
    expect(result.doc['.secretstore-login'].id_tokens).toEqual({ SECRETSTORE_ID_TOKEN: { aud: platformConfig.settings.ciUrl } });
  });

  it('runs exactly the standalone script as the base job\'s before_script', () => {
    expect(result.doc['.secretstore-login'].before_script).toEqual([result.script]);
  });

  it('has one job template per declared consumer, each extending the base job', () => {
    const jobs = Object.keys(result.doc).filter((k) => k !== '.secretstore-login');
    expect(jobs).toEqual(
      [
        'code-quality-scan',
        'e2e-test',
        'executor-rpm-build',
        'image-build',
        'image-push',
        'image-scan',
        'vulnerability-import',
      ].map((c) => `.secretstore-${c}`),
    );
    for (const job of jobs) expect(result.doc[job].extends).toBe('.secretstore-login');
  });

  it('sets the paths, keys, exported names and registry logins of every job (spec §2.1-2.3)', () => {
    const vars = (c: string) => result.doc[`.secretstore-${c}`].variables;
    for (const c of ['image-build', 'image-push', 'image-scan']) {
      expect(vars(c)).toEqual({ SECRETSTORE_READ: ORCH_READ, SECRETSTORE_REGISTRY_LOGIN: ORCH_LOGIN });
    }
    expect(vars('executor-rpm-build')).toEqual({
      SECRETSTORE_READ: 'kv2:secret/data/registry/svc-executor:password=SVC_EXECUTOR_PASSWORD,username=SVC_EXECUTOR_USERNAME',
    });
    expect(vars('code-quality-scan')).toEqual({
      SECRETSTORE_READ: 'kv2:secret/data/codequality/svc-orchestrator:token=CODEQUALITY_TOKEN,url=CODEQUALITY_URL',
    });
    expect(vars('vulnerability-import')).toEqual({ SECRETSTORE_READ: 'kv2:secret/data/vulnmgmt/svc-orchestrator:token=VULNMGMT_TOKEN' });
    expect(vars('e2e-test')).toEqual({
      SECRETSTORE_READ: [
        'kv2:secret/data/orchestrator/e2e-test-user:password=E2E_TEST_USER_PASSWORD,username=E2E_TEST_USER_USERNAME',
        'kv2:secret/data/testreport/svc-orchestrator:api_key=TESTREPORT_API_KEY:when=REPORTING_ENDPOINT',
      ].join('\n'),
    });
  });

  it('never reads the pull-only deployer account, which CI may not read (spec §2.3)', () => {
    expect(result.yamlText).not.toContain('svc-deployer');
    expect(result.yamlText).not.toContain(':8444');
  });

  it('only reads paths granted to registry-ci', () => {
    const policy = renderPolicyHcl(result.platform.ciAccess.registryCi.policy);
    const entries = Object.values(result.doc).flatMap((job: any) => String(job.variables?.SECRETSTORE_READ ?? '').split('\n').filter(Boolean));
    const paths = entries.map((e) => e.split(':')[1]);
    expect(paths.length).toBeGreaterThan(0);
    for (const p of paths) expect(policy).toContain(`path "${p}"`);
  });

  it('uses the store\'s real header and paths, keeps values off command lines, and never traces', () => {
    expect(result.script).toContain('X-Vault-Token');
    expect(result.script).not.toContain('X-Secretstore-Token');
    expect(result.script).toContain('/v1/auth/$_ss_auth_path/login');
    expect(result.script).toContain("_ss_auth_path='jwt'");
    expect(result.script).toContain("_ss_role='registry-ci'");
    expect(result.script).toContain('--password-stdin');
    expect(result.script).toContain('apk add --no-cache curl');
    expect(result.script).not.toMatch(/^\s*set -x/m);
    const code = result.script.split('\n').filter((l) => !/^\s*#/.test(l)).join('\n');
    expect(code).not.toMatch(/\bjq\b/);
    expect(code).not.toMatch(/\becho\b/);
  });

  it('is a valid POSIX sh script for dash (and BusyBox sh when installed)', () => {
    const file = path.join(result.outdir, SCRIPT);
    for (const shell of jobShells()) {
      expect(() => execFileSync(shell.argv[0], [...shell.argv.slice(1), '-n', file])).not.toThrow();
    }
  });

  it('is deterministic', () => {
    const again = synth();
    expect(again.yamlText).toBe(result.yamlText);
    expect(again.script).toBe(result.script);
  });

  it('documents the exported variable names in the file', () => {
    expect(result.yamlText).toContain('#     exports SVC_ORCHESTRATOR_PASSWORD, SVC_ORCHESTRATOR_USERNAME');
    expect(result.yamlText).toContain('#   reads secret/data/testreport/svc-orchestrator (only when REPORTING_ENDPOINT is set)');
    expect(result.yamlText).toContain('#   registry push login at registry.acme.example:8443 as svc-orchestrator');
  });
});

describe('CiLoginTemplate derives job templates from the declarations', () => {
  it('gives a new CI secret with a consumer its job template, with no other change', () => {
    const { doc } = synth((p) => {
      new CiSecret(p.ciAccess, 'docs-publish-token', {
        path: 'docs/publisher',
        keys: ['token'],
        consumers: ['docs-publish', 'code-quality-scan'],
        description: 'documentation site publishing token',
        readers: [p.ciAccess.registryCi],
      });
    });
    expect(doc['.secretstore-docs-publish'].variables).toEqual({
      SECRETSTORE_READ: 'kv2:secret/data/docs/publisher:token=DOCS_PUBLISH_TOKEN_TOKEN',
    });
    expect(doc['.secretstore-code-quality-scan'].variables.SECRETSTORE_READ).toBe(
      [
        'kv2:secret/data/codequality/svc-orchestrator:token=CODEQUALITY_TOKEN,url=CODEQUALITY_URL',
        'kv2:secret/data/docs/publisher:token=DOCS_PUBLISH_TOKEN_TOKEN',
      ].join('\n'),
    );
  });

  it('gives a new pull-only account a registry login at the pull port :8444', () => {
    const { doc } = synth((p) => {
      new RegistryServiceAccount(p.ciAccess, 'svc-scanner', {
        name: 'scanner',
        permissions: ['container-image:read', 'raw:read'],
        usedBy: 'image scanning in CI',
        consumers: ['image-scan-nightly'],
        readers: [p.ciAccess.registryCi],
      });
    });
    expect(doc['.secretstore-image-scan-nightly'].variables).toEqual({
      SECRETSTORE_READ: 'kv2:secret/data/registry/svc-scanner:password=SVC_SCANNER_PASSWORD,username=SVC_SCANNER_USERNAME',
      SECRETSTORE_REGISTRY_LOGIN: 'registry.acme.example:8444=SVC_SCANNER_USERNAME,SVC_SCANNER_PASSWORD',
    });
  });

  it('follows the platform settings: CI URL as audience, registry host and ports', () => {
    const config: PlatformConfig = {
      ...platformConfig,
      settings: { ...platformConfig.settings, ciUrl: 'https://ci.other.example', registryHost: 'reg.other.example', registryPorts: { push: 9443, pull: 9444 } },
    };
    const { doc, script } = synth(undefined, config);
    expect(doc['.secretstore-login'].id_tokens.SECRETSTORE_ID_TOKEN.aud).toBe('https://ci.other.example');
    expect(doc['.secretstore-image-build'].variables.SECRETSTORE_REGISTRY_LOGIN).toBe(
      'reg.other.example:9443=SVC_ORCHESTRATOR_USERNAME,SVC_ORCHESTRATOR_PASSWORD',
    );
    expect(script).toContain("_ss_audience='https://ci.other.example'");
  });

  it('exposes the job model', () => {
    const app = new SecretStoreApp({ outdir: path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-unit-')), 'out') });
    definePlatform(app, platformConfig);
    const template = app.node.findAll().find((c): c is CiLoginTemplate => c instanceof CiLoginTemplate)!;
    expect(template.templatePath).toBe(TEMPLATE);
    expect(template.scriptPath).toBe(SCRIPT);
    expect(template.audience).toBe(platformConfig.settings.ciUrl);
    expect(template.authPath).toBe('jwt');
    const e2e = template.jobTemplates().find((j) => j.consumer === 'e2e-test')!;
    expect(e2e.reads.map((r) => [r.apiPath, r.variables.map((v) => v.variable), r.whenSet])).toEqual([
      ['secret/data/orchestrator/e2e-test-user', ['E2E_TEST_USER_PASSWORD', 'E2E_TEST_USER_USERNAME'], undefined],
      ['secret/data/testreport/svc-orchestrator', ['TESTREPORT_API_KEY'], 'REPORTING_ENDPOINT'],
    ]);
  });
});

describe('CiLoginTemplate validation', () => {
  it('a secret whose consumers nobody may read stops synthesis (SSI-R8)', () => {
    const problems = problemsOf((p) => {
      new CiSecret(p.ciAccess, 'forgotten', { path: 'forgotten/token', keys: ['token'], consumers: ['deploy'], description: 'never granted' });
    });
    expect(problems.join('\n')).toContain('[ci-access/forgotten] SSI-R8 readers = []');
  });

  it('gives no template to a secret that only a non-CI identity may read, and says so in the file', () => {
    const { doc, yamlText } = synth((p) => {
      new CiSecret(p.ciAccess, 'forgotten', {
        path: 'forgotten/token',
        keys: ['token'],
        consumers: ['deploy'],
        description: 'granted to an application only',
        readers: [p.appRoles.applications[0]],
      });
    });
    expect(doc['.secretstore-deploy']).toBeUndefined();
    expect(yamlText).toContain('#   secret/data/forgotten/token (ci-access/forgotten): deploy');
  });

  it('reports two secrets that would export the same variables', () => {
    const problems = problemsOf((p) => {
      new CiSecret(p.appRoles, 'svc-orchestrator', {
        path: 'other/svc-orchestrator',
        keys: ['token'],
        consumers: ['other'],
        description: 'clashes with the account',
        readers: [p.ciAccess.registryCi],
      });
    });
    expect(problems.join('\n')).toContain('variable prefix of registry/svc-orchestrator = "SVC_ORCHESTRATOR": is also the prefix of other/svc-orchestrator');
  });

  it('reports reserved variable prefixes, unknown readWhenSet paths and bad login commands', () => {
    const problems = problemsOf((p) => {
      new CiSecret(p.ciAccess, 'ci-token', {
        path: 'citoken/x',
        keys: ['value'],
        consumers: ['other'],
        description: 'reserved prefix',
        readers: [p.ciAccess.registryCi],
      });
      new CiLoginTemplate(p.ciAccess, 'second-template', {
        role: p.ciAccess.registryCi,
        directory: 'ci2',
        readWhenSet: { 'no/such/secret': 'REPORTING_ENDPOINT', 'vulnmgmt/svc-orchestrator': 'lower-case' },
        registryLoginCommand: 'docker login; rm -rf /',
      });
    });
    const text = problems.join('\n');
    expect(text).toContain('variable prefix of citoken/x = "CI_TOKEN": must not start with CI_');
    expect(text).toContain('[ci-access/second-template] readWhenSet.no/such/secret = "REPORTING_ENDPOINT": names no secret registry-ci may read');
    expect(text).toContain('readWhenSet.vulnmgmt/svc-orchestrator = "lower-case": must be an upper-case variable name');
    expect(text).toContain('registryLoginCommand = "docker login; rm -rf /"');
  });

  it('lets variablePrefixes rename the exported variables (a stack of its own, outside the platform)', () => {
    const outdir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-unit-')), 'cdktf.out');
    const app = new SecretStoreApp({ outdir });
    const stack = new SecretStoreStack(app, 'ci', { settings: new PlatformSettings(platformConfig.settings) });
    const auth = new CiJwtAuth(stack, 'jwt', { path: 'gitlab', keySource: JwtKeySource.jwksUrl('https://gitlab.acme.example/oauth/discovery/keys') });
    const role = new CiJwtRole(stack, 'role', { auth, roleName: 'ci-reader' });
    new CiSecret(stack, 'ci-token', { path: 'citoken/x', keys: ['value'], consumers: ['other'], description: 'renamed', readers: [role] });
    new CiLoginTemplate(stack, 'template', { role, variablePrefixes: { 'citoken/x': 'CITOKEN' }, registryLoginCommand: 'buildah login' });
    app.synth();
    const doc = parseYaml(fs.readFileSync(path.join(outdir, TEMPLATE), 'utf8'));
    expect(doc['.secretstore-other'].variables).toEqual({ SECRETSTORE_READ: 'kv2:secret/data/citoken/x:value=CITOKEN_VALUE' });
    const script = fs.readFileSync(path.join(outdir, SCRIPT), 'utf8');
    expect(script).toContain("_ss_auth_path='gitlab'");
    expect(script).toContain("_ss_role='ci-reader'");
    expect(script).toContain("_ss_login_cmd_default='buildah login'");
  });
});
