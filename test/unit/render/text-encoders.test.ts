import { spawnSync } from 'child_process';
import * as yaml from 'js-yaml';
import { hcl1PolicyItems } from '../../../lib/acl/hcl1-decoder';
import { PolicyDocument } from '../../../lib/model/policy-document';
import { shellQuote } from '../../../lib/private/shell-quote';
import { renderCiLoginScript } from '../../../lib/render/ci-login-script';
import { renderGitlabCiTemplate, CI_LOGIN_BASE_JOB } from '../../../lib/render/gitlab-ci-template';
import { renderPolicyHcl } from '../../../lib/render/policy-hcl';
import * as ts from 'typescript';
import { renderConfigurationPipelineYaml } from '../../../lib/render/configuration-pipeline-yaml';
import { renderE2eJobYaml, renderGlobalSetup, renderPlaywrightConfig } from '../../../lib/render/e2e-playwright';
import { commentText, hclString, jsonValue, shellWord, templateCommentText, templateString, typescriptString, yamlScalar } from '../../../lib/render/text-encoders';
import { SeededRandom } from '../../support/seeded-random';

// Property tests (issue 11): whatever text reaches an output through its encoder, the output keeps
// its structure. Each property runs on random hostile strings from a printed seed.

const random = SeededRandom.fromEnvironment('text-encoders');
const RUNS = 150;
const cases = (n = RUNS): number[] => Array.from({ length: n }, (_, i) => i);
const withSeed = (what: string) => `${what} (seed ${random.seed})`;

describe('encoders, one per output format', () => {
  it('comment text is one line', () => {
    for (const _ of cases()) {
      const text = random.hostileString();
      expect(commentText(text)).not.toMatch(/[\n\r\u0085\u2028\u2029]/);
    }
    expect(commentText('a\nb\u2028c')).toBe('a\\u000ab\\u2028c');
  });

  it('a YAML scalar reads back as the same string (js-yaml), alone and as a mapping value', () => {
    for (const _ of cases()) {
      const value = random.hostileString();
      expect(yaml.load(`k: ${yamlScalar(value)}\n# ${commentText(value)}\nother: 1\n`)).toEqual({ k: value, other: 1 });
    }
  });

  it('a JSON value reads back, and holds no raw U+2028/U+2029', () => {
    for (const _ of cases()) {
      const value = random.hostileString();
      expect(JSON.parse(jsonValue(value))).toBe(value);
      expect(jsonValue(value)).not.toMatch(/[\u2028\u2029]/);
    }
  });

  it('an HCL string never holds a raw template introducer, quote or line break', () => {
    for (const _ of cases()) {
      const inner = hclString(random.hostileString()).slice(1, -1);
      expect(inner).not.toMatch(/[$%]\{|(^|[^\\])(\\\\)*"|[\n\r\u0085\u2028\u2029]/);
    }
  });

  it('a template comment cannot be ended early', () => {
    for (const _ of cases()) {
      expect(templateCommentText(`${random.hostileString()}*/${random.hostileString()}`)).not.toMatch(/\*\/|[\n\r\u2028\u2029]/);
    }
  });

  it('a template string holds no raw quote or line break', () => {
    for (const _ of cases()) {
      const inner = templateString(random.hostileString()).slice(1, -1);
      expect(inner).not.toMatch(/(^|[^\\])(\\\\)*"|[\n\r\u0085\u2028\u2029]/);
    }
  });

  it('a TypeScript string literal reads back as the same string, one line, and is JSON.stringify for plain text', () => {
    for (const _ of cases()) {
      const value = random.hostileString();
      const literal = typescriptString(value);
      expect(literal).not.toMatch(/[\n\r\u0085\u2028\u2029]/);
      const file = ts.createSourceFile('x.ts', `const x = ${literal};\n`, ts.ScriptTarget.ES2022);
      const statements = file.statements as ts.NodeArray<ts.VariableStatement>;
      expect([withSeed('ts'), statements.length]).toEqual([withSeed('ts'), 1]);
      const init = statements[0].declarationList.declarations[0].initializer as ts.StringLiteral;
      expect([withSeed('ts'), ts.isStringLiteral(init), init.text]).toEqual([withSeed('ts'), true, value]);
    }
    expect(typescriptString('./reporting-reporter "x" \\')).toBe(JSON.stringify('./reporting-reporter "x" \\'));
    expect(typescriptString('a\u2028b\u2029c\u0000\u007f\ufeff')).toBe('"a\\u2028b\\u2029c\\u0000\\u007f\\ufeff"');
  });

  it('a POSIX shell word is one word with the exact value (run by sh)', () => {
    const values = cases().map(() => random.hostileString().replace(/\u0000/g, ''));
    const script = values.flatMap((v) => [`printf '%s\\001' ${shellQuote(v)}`, `printf '%s\\001' ${shellWord(v === '' ? 'x' : v)}`]).join('\n');
    const r = spawnSync('sh', ['-c', script], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout.split('\u0001').slice(0, -1)).toEqual(values.flatMap((v) => [v, v === '' ? 'x' : v]));
    expect(shellWord('/secretstore/auth/role-id')).toBe('/secretstore/auth/role-id');
  });
});

describe('no input string changes the structure of an output', () => {
  it('policy HCL: random sources (construct paths) and paths never change the parsed policy set', async () => {
    for (const _ of cases(60)) {
      const policy = new PolicyDocument('p');
      const paths = [`secret/data/${random.hostileString(12)}`, 'secret/data/fixed'];
      paths.forEach((p) => policy.addRule(p, ['read'], random.hostileString()));
      const items = hcl1PolicyItems('p', renderPolicyHcl(policy), 'openbao');
      const expected = [...new Set(paths)].sort().map((p) => ({ keys: ['path', p], value: { capabilities: ['read'] } }));
      expect([withSeed('policy'), items]).toEqual([withSeed('policy'), expected]);
    }
  });

  it('CI YAML: random descriptions, sources, consumers and entries never change the parsed keys or values', () => {
    for (const _ of cases(80)) {
      const loginScript = renderCiLoginScript({
        roleName: random.hostileString(8),
        authPath: 'jwt',
        audience: random.hostileString(8),
        registryLoginCommand: random.hostileString(8),
      });
      const entries = [random.hostileString(10), random.hostileString(10)];
      const text = renderGitlabCiTemplate({
        fileName: random.hostileString(8),
        templatePath: random.hostileString(8),
        roleName: random.hostileString(8),
        audience: random.hostileString(8),
        registryLoginCommand: random.hostileString(8),
        loginScript,
        unreadable: [{ policyPath: random.hostileString(8), source: random.hostileString(8), consumers: [random.hostileString(8)] }],
        jobs: [
          {
            consumer: random.hostileString(8),
            jobName: '.secretstore-job',
            reads: entries.map((entry) => ({
              secret: undefined as never,
              source: random.hostileString(8),
              description: random.hostileString(),
              apiPath: random.hostileString(8),
              variables: [{ key: 'k', variable: random.hostileString(6) }],
              whenSet: random.hostileString(6),
              entry,
            })),
            registryLogins: [],
          },
        ],
      });
      const doc = yaml.load(text) as Record<string, any>;
      expect(Object.keys(doc).sort()).toEqual([CI_LOGIN_BASE_JOB, '.secretstore-job'].sort());
      expect(Object.keys(doc['.secretstore-job']).sort()).toEqual(['extends', 'variables']);
      expect(doc['.secretstore-job'].variables.SECRETSTORE_READ).toBe(entries.join('\n'));
      expect(doc[CI_LOGIN_BASE_JOB].before_script).toEqual([loginScript]);
      expect(Object.keys(doc[CI_LOGIN_BASE_JOB]).sort()).toEqual(['before_script', 'id_tokens', 'variables']);
    }
  });

  it('the configuration pipeline: random install command, image, audience, committed copy and role names never change the parsed keys', () => {
    const base = {
      stacks: ['app-roles', 'ci-access'],
      authPath: 'jwt',
      acknowledgeLabel: 'access-risk-acknowledged',
      noteTokenVariable: 'SECRETSTORE_IAC_NOTE_TOKEN',
    };
    const shape = (doc: Record<string, any>) => Object.keys(doc).sort().map((k) => [k, Object.keys(doc[k] ?? {}).sort()]);
    const plain = yaml.load(
      renderConfigurationPipelineYaml({ ...base, audience: 'a', applyRoleName: 'p', planRoleName: 'r', installCommand: 'i', image: 'img', committedCopy: 'c.yml' }),
    ) as Record<string, any>;
    for (const _ of cases(60)) {
      const [audience, applyRoleName, planRoleName, installCommand, committedCopy] = [1, 2, 3, 4, 5].map((n) => `Q${n}${random.hostileString(12)}`);
      const image = random.next() < 0.2 ? undefined : `Q6${random.hostileString(12)}`;
      const doc = yaml.load(
        renderConfigurationPipelineYaml({ ...base, audience, applyRoleName, planRoleName, installCommand, image: image ?? 'img', committedCopy }),
      ) as Record<string, any>;
      const context = withSeed(JSON.stringify({ audience, applyRoleName, planRoleName, installCommand, committedCopy, image }));
      expect([context, shape(doc)]).toEqual([context, shape(plain)]);
      expect([context, doc.variables.SECRETSTORE_IAC_INSTALL, doc.variables.SECRETSTORE_IAC_PIPELINE_COPY]).toEqual([context, installCommand, committedCopy]);
      expect([context, doc['.secretstore-iac-login'].id_tokens.SECRETSTORE_ID_TOKEN.aud]).toEqual([context, audience]);
      expect([context, doc['.secretstore-iac-plan-login'].variables.SECRETSTORE_IAC_LOGIN_ROLE, doc['.secretstore-iac-apply-login'].variables.SECRETSTORE_IAC_LOGIN_ROLE]).toEqual([context, planRoleName, applyRoleName]);
      expect([context, doc['secretstore-iac-synth'].image, doc['.secretstore-iac-job'].image]).toEqual([context, image ?? 'img', image ?? 'img']);
    }
    // Names that are job-name parts, shell variable names or case patterns are refused, all at once.
    expect(() =>
      renderConfigurationPipelineYaml({ ...base, stacks: ['a b'], noteTokenVariable: 'X-Y', acknowledgeLabel: 'a,b', audience: 'a', applyRoleName: 'p', planRoleName: 'r', installCommand: 'i', committedCopy: 'c' }),
    ).toThrow('configuration pipeline: stack "a b": must be letters, digits, "_", "." or "-"; noteTokenVariable "X-Y": must be a shell variable name; acknowledgeLabel "a,b": must be letters');
  });

  it('the e2e files: random target, image, branch, login fields and reporter never change the parsed job keys or the TypeScript structure', () => {
    const shape = (doc: Record<string, any>) => Object.keys(doc).sort().map((k) => [k, Object.keys(doc[k] ?? {}).sort()]);
    const plainJob = yaml.load(renderE2eJobYaml({ ciBaseUrl: 'u', image: 'i', branch: 'b' })) as Record<string, any>;
    const tsShape = (text: string) => {
      const file = ts.createSourceFile('x.ts', text, ts.ScriptTarget.ES2022);
      const literals: string[] = [];
      const visit = (n: ts.Node): void => {
        if (ts.isStringLiteral(n)) literals.push(n.text);
        ts.forEachChild(n, visit);
      };
      visit(file);
      return { kinds: file.statements.map((st) => ts.SyntaxKind[st.kind]), diagnostics: (file as any).parseDiagnostics.length as number, literals };
    };
    const plainSetup = tsShape(renderGlobalSetup({}));
    const plainConfig = tsShape(renderPlaywrightConfig({}));
    let refused = 0;
    for (const _ of cases(60)) {
      const [ciBaseUrl, image, branch, usernameField, storageKey, tokenKey, reportingReporter] = [1, 2, 3, 4, 5, 6, 7].map((n) => `Q${n}${random.hostileString(12)}`);
      const context = withSeed(JSON.stringify({ ciBaseUrl, image, branch, usernameField, storageKey, tokenKey, reportingReporter }));
      if (/["\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/.test(branch)) {
        refused++;
        expect(() => renderE2eJobYaml({ ciBaseUrl, image, branch })).toThrow(/^e2e job: branch ".*": must not hold a double quote or a control character/);
      } else {
        const job = yaml.load(renderE2eJobYaml({ ciBaseUrl, image, branch })) as Record<string, any>;
        expect([context, shape(job)]).toEqual([context, shape(plainJob)]);
        expect([context, job['e2e-test'].variables.E2E_BASE_URL, job['e2e-test'].image, job['e2e-test'].rules]).toEqual([
          context, ciBaseUrl, image, [{ if: `$CI_COMMIT_BRANCH == "${branch}"` }],
        ]);
      }
      const setup = tsShape(renderGlobalSetup({ usernameField, storageKey, entryFields: { tokenKey, userKey: 'user' } }));
      expect([context, setup.kinds, setup.diagnostics]).toEqual([context, plainSetup.kinds, 0]);
      expect([context, setup.literals.filter((l) => [usernameField, storageKey, tokenKey].includes(l)).sort()]).toEqual([context, [usernameField, storageKey, tokenKey].sort()]);
      const config = tsShape(renderPlaywrightConfig({ reportingReporter }));
      expect([context, config.kinds, config.diagnostics, config.literals.includes(reportingReporter)]).toEqual([context, plainConfig.kinds, 0, true]);
    }
    expect(refused).toBeGreaterThan(0);
  });

  it('the CI login script: random role, audience and login command stay one shell word each (sh -n, and the commands are those of a plain value)', () => {
    const plain = renderCiLoginScript({ roleName: 'r', authPath: 'jwt', audience: 'a', registryLoginCommand: 'c' });
    for (const _ of cases(40)) {
      // A marker prefix keeps each value's encoded form unique in the script.
      const [roleName, audience, registryLoginCommand] = [1, 2, 3].map((n) => `Q${n}x${random.hostileString(10).replace(/\u0000/g, '')}`);
      const script = renderCiLoginScript({ roleName, authPath: 'jwt', audience, registryLoginCommand });
      // Put the plain values back in place of the encoded words: what is left is the plain script.
      const back = script
        .split(shellQuote(roleName)).join(shellQuote('r'))
        .split(shellQuote(audience)).join(shellQuote('a'))
        .split(shellQuote(registryLoginCommand)).join(shellQuote('c'))
        .split(`"${commentText(roleName)}"`).join('"r"')
        .split(`(aud ${commentText(audience)})`).join('(aud a)');
      expect([withSeed('script'), back]).toEqual([withSeed('script'), plain]);
      expect(spawnSync('sh', ['-n', '-c', script]).status).toBe(0);
    }
  });
});
