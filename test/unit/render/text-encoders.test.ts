import { spawnSync } from 'child_process';
import * as yaml from 'js-yaml';
import { parseHclPolicyText } from '../../../lib/acl/hcl-policy-parser';
import { PolicyDocument } from '../../../lib/model/policy-document';
import { shellQuote } from '../../../lib/private/shell-quote';
import { renderCiLoginScript } from '../../../lib/render/ci-login-script';
import { renderGitlabCiTemplate, CI_LOGIN_BASE_JOB } from '../../../lib/render/gitlab-ci-template';
import { renderPolicyHcl } from '../../../lib/render/policy-hcl';
import { commentText, hclString, jsonValue, shellWord, templateCommentText, templateString, yamlScalar } from '../../../lib/render/text-encoders';
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
      const items = await parseHclPolicyText('p', renderPolicyHcl(policy));
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
