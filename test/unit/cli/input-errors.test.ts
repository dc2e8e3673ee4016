/**
 * Every input error is a sentence (issue 45): a file, directory, time or package spec the user gives
 * that the CLI cannot take is said in one line naming the option, the value and what to do, with the
 * usage exit code; never a raw errno (ENOENT, EISDIR, ...), `Invalid time value`, a JavaScript
 * TypeError or an abort. Run through the CLI's entry (`runCli`), as the bin runs it.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CommandContext } from '../../../lib/cli/command';
import { ExitCode } from '../../../lib/cli/exit-code';
import { readInputFile } from '../../../lib/cli/input-file';
import { runCli } from '../../../lib/cli/run-cli';
import { checkLibrarySpec, isInstallableRange } from '../../../lib/render/library-spec';
import { ACCESS_FIXTURES, REPO_ROOT } from '../../support/paths';
import { SeededRandom } from '../../support/seeded-random';

// node-semver, the parser npm installs with (in node_modules as a dependency of the build tools; no types).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const semver = require('semver') as {
  validRange(range: string, loose?: boolean): string | null;
  satisfies(version: string, range: string, loose?: boolean): boolean;
  inc(version: string, release: 'patch'): string | null;
};

/**
 * Whether node-semver finds a version satisfying `range` (the oracle; its `minVersion` is not one in
 * the 6.x the build tools bring: it takes the lowest of a set's lower bounds). The least version of a
 * comparator set is at one of its comparators' versions (as written, past it by a patch, or its
 * release), or 0.0.0: each is tried with `satisfies`, npm's own test.
 */
function semverSatisfiable(range: string): boolean {
  const desugared = semver.validRange(range) ?? '';
  const versions = desugared.match(/[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?/g) ?? [];
  const candidates = new Set(['0.0.0']);
  for (const v of versions) {
    candidates.add(v);
    candidates.add(v.replace(/-.*$/, ''));
    const next = semver.inc(v.replace(/-.*$/, ''), 'patch');
    if (next) candidates.add(next);
  }
  return [...candidates].some((v) => semver.satisfies(v, range));
}

const LOG = path.join(REPO_ROOT, 'test', 'fixtures', 'usage', 'openbao-audit.log');

async function cli(argv: string[], cwd = ACCESS_FIXTURES) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const context: CommandContext = { env: { PATH: process.env.PATH }, cwd, isTerminal: false, stdout: (l) => stdout.push(l), stderr: (l) => stderr.push(l) };
  const code = await runCli(argv, context);
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

/** What no message shows: errno codes, JavaScript's own error texts, a stack trace. */
const RAW = /\b(?:ENOENT|EISDIR|ENOTDIR|EPERM|EACCES|EEXIST|ENOTEMPTY|EROFS|ELOOP|ERR_[A-Z_]+)\b|Invalid time value|TypeError|Cannot read propert|is not a function|undefined|\n\s+at /;

/** One sentence on standard error, without raw error text. */
function expectSentence(r: { stderr: string }): void {
  expect(r.stderr).not.toMatch(RAW);
  expect(r.stderr.split('\n')).toHaveLength(1);
}

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'input-errors-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A file this process cannot read: mode 000, or for root (who reads any mode) a procfs file that refuses reads. */
function unreadableFile(): string | undefined {
  if (process.getuid?.() !== 0) {
    const file = path.join(tmp, 'unreadable');
    fs.writeFileSync(file, '{}');
    fs.chmodSync(file, 0o000);
    return file;
  }
  const candidate = '/proc/sys/vm/drop_caches';
  try {
    fs.readFileSync(candidate);
    return undefined;
  } catch {
    return fs.existsSync(candidate) ? candidate : undefined;
  }
}

describe('usage: audit entries dated after the run are flagged, never counted as recent use', () => {
  it('a registry-ci read dated 2999 is not a use: counted apart, named by file:line, exit 1', async () => {
    const lines = fs.readFileSync(LOG, 'utf8').split('\n');
    // The orchestrator job's read of its registry account: its request (line 5) and response (line 6).
    expect(lines[5]).toContain('"display_name":"jwt-acme/platform/orchestrator"');
    const future = lines.map((l, i) => (i === 4 || i === 5 ? l.replace(/"time":"[^"]+"/, '"time":"2999-01-01T00:00:00Z"') : l));
    const file = path.join(tmp, 'future.log');
    fs.writeFileSync(file, future.join('\n'));
    const honest = JSON.parse((await cli(['usage', 'base', '--log', LOG, '--format', 'json'])).stdout);
    const r = await cli(['usage', 'base', '--log', file, '--format', 'json']);
    expect(r.code).toBe(ExitCode.usageFindings);
    const report = JSON.parse(r.stdout);
    expect(report.counts.future).toBe(1);
    expect(report.counts.futureAt).toEqual([`${file}:6`]);
    expect(report.counts.responses).toBe(honest.counts.responses - 1);
    const lastUses = (rep: any) => rep.identities.flatMap((u: any) => u.used.map((g: any) => g.lastUse));
    expect(lastUses(report).some((t: string) => t.startsWith('2999'))).toBe(false);
    expect(report.seen.last.startsWith('2999')).toBe(false);
    const md = await cli(['usage', 'base', '--log', file]);
    expect(md.stdout).toMatch(/1 entry is dated after this report was made \([^)]+\) and not counted as use \(at [^)]*future\.log:6\)/);
  });

  it('a usage file whose request is dated after its log ends: the review does not call it "less than a day ago"', async () => {
    const written = JSON.parse((await cli(['usage', 'base', '--log', LOG, '--format', 'json'])).stdout);
    const ci = written.identities.find((u: any) => u.identity === 'jwt/registry-ci');
    const grant = ci.used.find((g: any) => g.rule === 'secret/data/registry/svc-orchestrator');
    grant.lastUse = '2999-01-01T00:00:00Z';
    grant.requests[0].lastUse = '2999-01-01T00:00:00Z';
    const file = path.join(tmp, 'future-usage.json');
    fs.writeFileSync(file, JSON.stringify(written));
    const r = await cli(['access-diff', 'base', 'head-account-added', '--usage', file]);
    expect(r.stdout).not.toContain('less than a day ago');
    expect(r.stdout).toMatch(/\*\*1 request is dated after the end of the log or after this review .*so not counted as use\*\*: `jwt\/registry-ci` read `secret\/data\/registry\/svc-orchestrator` last `2999-01-01T00:00:00Z`/);
  });
});

describe('--since and --until: a bound no date can hold is a usage error, not "Invalid time value"', () => {
  it.each(['99999999999999999d', '9999999999999h', '275761-01-01'])('--since %s', async (since) => {
    const r = await cli(['usage', 'base', '--log', LOG, '--since', since]);
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stderr).toContain(`--since ${since}: not a time`);
    expectSentence(r);
  });
});

describe('usage --log: only a readable regular file is an audit log', () => {
  it('a directory is named as one (exit 2), with what to give instead', async () => {
    const r = await cli(['usage', 'base', '--log', tmp]);
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stderr).toBe(`secretstore-iac usage: --log ${tmp}: it is a directory, not a file; give the path of the file audit device's log (sys/audit, type "file", options.file_path) inside it (see secretstore-iac usage --help)`);
  });

  it('a line longer than any audit entry ends the read with a sentence (exit 3), memory bounded', async () => {
    const file = path.join(tmp, 'one-long-line.log');
    const fd = fs.openSync(file, 'w');
    const chunk = Buffer.alloc(8 << 20, 0x61);
    for (let i = 0; i < 9; i++) fs.writeSync(fd, chunk);
    fs.closeSync(fd);
    const r = await cli(['usage', 'base', '--log', file]);
    expect(r.code).toBe(ExitCode.runtime);
    expect(r.stderr).toBe(`secretstore-iac usage: cannot read the audit log ${file}: line 1 is longer than 64 MiB, which no audit entry is: it is not a file audit device's log`);
    fs.rmSync(file);
  });
});

describe('init --package: refused unless a runner can install it safely', () => {
  const init = async (spec: string) => {
    const dir = fs.mkdtempSync(path.join(tmp, 'init-'));
    const r = await cli(['init', 'config', '--package', spec], dir);
    return { ...r, written: fs.readdirSync(dir) };
  };

  it('a plain http: tarball URL (and git://) off this machine: refused, naming https:', async () => {
    for (const spec of ['http://packages.example.com/secretstore-iac-0.2.0.tgz', 'git+http://gitlab.example.com/acme/secretstore-iac.git#v0.2.0', 'git://gitlab.example.com/acme/secretstore-iac.git#v0.2.0']) {
      const r = await init(spec);
      expect([spec, r.code, r.written]).toEqual([spec, ExitCode.usage, []]);
      expect(r.stderr).toMatch(/is not encrypted or authenticated: anyone on the way to gitlab\.example\.com|packages\.example\.com could change the package every runner installs and runs; use https:/);
      expectSentence(r);
    }
  });

  it('a URL with credentials: refused without repeating them, naming the .npmrc way', async () => {
    for (const spec of [
      'https://deploy:s3cr3t-pass@packages.example.com/secretstore-iac-0.2.0.tgz',
      'https://glpat-s3cr3tToken@gitlab.example.com/api/v4/projects/1/packages/generic/x/0.2.0/secretstore-iac-0.2.0.tgz',
      'https://packages.example.com/secretstore-iac-0.2.0.tgz?private_token=s3cr3tToken',
      'git+https://oauth2:s3cr3tToken@gitlab.example.com/acme/secretstore-iac.git#v0.2.0',
    ]) {
      const r = await init(spec);
      expect([r.code, r.written]).toEqual([ExitCode.usage, []]);
      expect(r.stderr).toContain('(a URL with credentials, not shown)');
      expect(r.stderr).toContain('.npmrc');
      expect(r.stderr).toContain('_authToken=${NPM_TOKEN}');
      expect(r.stderr).not.toMatch(/s3cr3t/);
      expectSentence(r);
    }
  });

  it('an ssh git URL names its user, no credential: taken', async () => {
    expect((await init('git+ssh://git@gitlab.example.com/acme/secretstore-iac.git#v0.2.0')).code).toBe(ExitCode.ok);
  });

  it('a range npm cannot install (^0.2.0 - ^0.3.0): refused, naming the grammar', async () => {
    // What npm makes of it: its reader drops the "-" and intersects the two carets, which no version satisfies.
    expect(semver.validRange('^0.2.0 - ^0.3.0', true)).toBe('>=0.2.0 <0.3.0 >=0.3.0 <0.4.0');
    for (const v of ['0.2.0', '0.2.9', '0.3.0', '0.3.9']) expect(semver.satisfies(v, '^0.2.0 - ^0.3.0', true)).toBe(false);
    for (const spec of ['^0.2.0 - ^0.3.0', 'npm:@acme/secretstore-iac@^0.2.0 - ^0.3.0', '>=0.2.0 <', '^0.2.0 ||', '0.2.0 - 0.3.0 - 0.4.0']) {
      const r = await init(spec);
      expect([spec, r.code, r.written]).toEqual([spec, ExitCode.usage, []]);
      expect(r.stderr).toContain('is not a version range npm can install');
      expectSentence(r);
    }
  });

  it('the ranges npm takes are taken: hyphen of plain versions, ||, comparators, x-ranges', async () => {
    for (const spec of ['0.2.0 - 0.3.4', '^0.2.0 || ^0.3.0', '>=0.2.0 <0.4.0', '0.2.x', '~0.2.1', 'npm:@acme/secretstore-iac@0.2.0 - 0.3']) {
      expect([spec, checkLibrarySpec(spec).kind]).toEqual([spec, 'registry']);
    }
  });

  // The oracle: node-semver, the parser npm installs with.
  it('property: every range the check takes, node-semver takes strictly; every range of the grammar, both take', () => {
    const random = SeededRandom.fromEnvironment('init --package ranges');
    const pieces = ['0', '1', '2', '9', '.', '.', '-', ' ', ' - ', '^', '~', '>', '<', '=', '>=', '||', 'x', '*', 'v', '+', 'a', 'rc', '01'];
    let taken = 0;
    for (let i = 0; i < 5000; i++) {
      const text = Array.from({ length: 1 + random.int(10) }, () => random.pick(pieces)).join('');
      if (!isInstallableRange(text)) continue;
      taken++;
      expect([text, semver.validRange(text) !== null]).toEqual([text, true]);
    }
    expect(taken).toBeGreaterThan(50);
    // Ranges written by the grammar: all taken by both.
    const xr = () => random.pick(['0', '1', '12', 'x', 'X', '*']);
    const part = () => random.pick(['0', '7', 'rc', 'beta-1', '0a']);
    const partial = () => {
      const n = 1 + random.int(3);
      const parts = [xr(), xr(), xr()].slice(0, n).join('.');
      return n === 3 ? `${parts}${random.int(2) ? `-${part()}${random.int(2) ? `.${part()}` : ''}` : ''}${random.int(3) === 0 ? `+${part()}` : ''}` : parts;
    };
    const simple = () => `${random.pick(['', '^', '~', '>', '>=', '<', '<=', '='])}${partial()}`;
    const range = () => (random.int(3) === 0 ? `${partial()} - ${partial()}` : Array.from({ length: 1 + random.int(3) }, simple).join(' '));
    // Every range of the grammar: taken exactly when node-semver finds a version that satisfies it
    // ({@link semverSatisfiable}: npm would install nothing otherwise, issue 45), refused with its own sentence otherwise.
    let unsatisfiable = 0;
    for (let i = 0; i < 2000; i++) {
      const text = Array.from({ length: 1 + random.int(3) }, range).join(random.pick([' || ', '||', '  ||  ']));
      expect([text, semver.validRange(text) !== null]).toEqual([text, true]);
      // Where a prerelease is written, the majors of node-semver disagree (6 reads `<=0.x` as `<1.0.0`,
      // 7, npm's, as `<1.0.0-0`): compared on release versions only.
      if (/[0-9xX*]-/.test(text)) continue;
      const satisfiable = semverSatisfiable(text);
      if (!satisfiable) unsatisfiable++;
      expect([text, isInstallableRange(text)]).toEqual([text, satisfiable]);
    }
    expect(unsatisfiable).toBeGreaterThan(20);
  });

  it('a range in the grammar that no version satisfies (>=0.3.0 <0.2.0, >1.2.3 <1.2.4, <0.0.0): refused, saying so', async () => {
    for (const spec of ['>=0.3.0 <0.2.0', '>1.2.3 <1.2.4', '<0.0.0', '>* ', 'npm:@acme/secretstore-iac@^0.3.0 <0.3.0']) {
      const check = checkLibrarySpec(spec.trim());
      expect([spec, check.kind, check.problem]).toEqual([spec, undefined, expect.stringContaining('is a version range no version satisfies')]);
    }
    const r = await init('>=0.3.0 <0.2.0');
    expect([r.code, r.written]).toEqual([ExitCode.usage, []]);
    expect(r.stderr).toContain('">=0.3.0 <0.2.0" is a version range no version satisfies');
    expectSentence(r);
    // Satisfiable ones stay taken, prereleases where a comparator names one included.
    for (const spec of ['>=1.2.3-rc.1 <1.2.3', '>1.2.3 <=1.2.4', '^0.0.3', '<0.0.1', '>=0.2.0 <0.2.1']) expect([spec, checkLibrarySpec(spec).kind]).toEqual([spec, 'registry']);
  });
});

describe('init DIR: a directory it cannot write is a sentence, not ENOTDIR, EPERM or EEXIST', () => {
  it('a DIR below a file (ENOTDIR), a file as DIR, a DIR it may not create (EPERM/EACCES), an empty DIR: exit 2, nothing written', async () => {
    const file = path.join(tmp, 'a-file');
    fs.writeFileSync(file, 'x');
    const cases: Array<[string, RegExp]> = [
      [path.join(file, 'config'), /a-file\/config cannot be created: a part of its path is a file, not a directory; nothing was written/],
      [path.join(file, 'deeper', 'config'), /cannot be created: a part of its path is a file, not a directory; nothing was written/],
      [file, /a-file is not a directory; nothing was written/],
      ['', /DIR "" is an empty path/],
    ];
    // /proc refuses new entries to anyone, root too.
    if (fs.existsSync('/proc/self')) cases.push(['/proc/secretstore-iac-config', /\/proc\/secretstore-iac-config cannot be (?:created|written)/]);
    for (const [dir, message] of cases) {
      const r = await cli(['init', dir], tmp);
      expect([dir, r.code]).toEqual([dir, ExitCode.usage]);
      expect(r.stderr).toMatch(message);
      expectSentence(r);
    }
    expect(fs.readFileSync(file, 'utf8')).toBe('x');
  });
});

describe('a synthesized stack file that holds no object is named, not "Cannot read properties of null"', () => {
  it.each([['null'], ['[]'], ['"text"'], ['{"resource": null}'], ['{"resource": {"vault_policy": null}}'], ['{"resource": {"vault_policy": {"x": 3}}}']])('cdk.tf.json holding %s: exit 3, the file named', async (content) => {
    const out = path.join(tmp, `out-${Buffer.from(content).toString('hex')}`);
    fs.cpSync(path.join(ACCESS_FIXTURES, 'base'), out, { recursive: true });
    fs.writeFileSync(path.join(out, 'stacks', 'ci-access', 'cdk.tf.json'), content);
    const r = await cli(['access', out]);
    expect(r.code).toBe(ExitCode.runtime);
    expect(r.stderr).toContain(path.join(out, 'stacks', 'ci-access', 'cdk.tf.json'));
    expect(r.stderr).toContain('synthesize again (`npm run synth`)');
    expectSentence(r);
  });

  it('manifest.json holding null', async () => {
    const out = path.join(tmp, 'null-manifest');
    fs.cpSync(path.join(ACCESS_FIXTURES, 'base'), out, { recursive: true });
    fs.writeFileSync(path.join(out, 'manifest.json'), 'null');
    const r = await cli(['access', out]);
    expect(r.code).toBe(ExitCode.runtime);
    expect(r.stderr).toContain('manifest.json holds null, not the JSON object cdktf writes');
    expectSentence(r);
  });
});

/**
 * Property: for each command option that names a file the CLI reads, each bad path is a usage error
 * (exit 2) in one sentence without raw error text: a missing file, a directory, an empty string,
 * /dev/zero (a device that never ends: no abort, no memory filled) and a file this process cannot read.
 */
describe('property: every path option of the CLI, given a path it cannot read, answers with one sentence and exit 2', () => {
  const plansOut = path.join(ACCESS_FIXTURES, 'base');
  // Each entry: the command line with FILE where the path goes.
  const OPTIONS: Array<[string, string[]]> = [
    ['usage --log', ['usage', 'base', '--log', 'FILE']],
    ['usage --log (second of two)', ['usage', 'base', '--log', LOG, '--log', 'FILE']],
    ['access-diff --usage-log', ['access-diff', 'base', 'head-nothing-changed', '--usage-log', 'FILE']],
    ['access-diff --usage', ['access-diff', 'base', 'head-nothing-changed', '--usage', 'FILE']],
    ['access-diff --plan', ['access-diff', '--plan', 'app-roles=FILE', '--outdir', plansOut]],
    ['check-approle --credentials-file', ['check-approle', '--credentials-file', 'FILE']],
    ['tf --reviewed-plans', ['tf', 'ci-access', '--refuse-replace', '--reviewed-plans', 'FILE', '--', 'apply', 'ci-access.tfplan']],
    ['tf --released-grants', ['tf', 'app-roles-01', '--refuse-replace', '--released-grants', 'FILE', '--', 'apply', 'release.tfplan']],
  ];
  const missing = path.join(os.tmpdir(), `no-such-file-${process.pid}`);
  const cases: Array<[string, () => string | undefined]> = [
    ['a missing file', () => missing],
    ['a directory', () => tmp],
    ['an empty string', () => ''],
    ['/dev/zero', () => (fs.existsSync('/dev/zero') ? '/dev/zero' : undefined)],
    ['an unreadable file', unreadableFile],
  ];

  it.each(OPTIONS)('%s', async (_name, argv) => {
    const seen: string[] = [];
    for (const [what, pathOf] of cases) {
      const file = pathOf();
      if (file === undefined) continue;
      seen.push(what);
      const r = await cli(argv.map((a) => a.replace('FILE', file)));
      expect([what, r.code]).toEqual([what, ExitCode.usage]);
      expect([what, r.stderr]).toEqual([what, expect.not.stringMatching(RAW)]);
      expect([what, r.stderr.split('\n').length]).toEqual([what, 1]);
    }
    // The device and the unreadable file exist on the machines the suite runs on (Linux): they were tried.
    if (process.platform === 'linux') expect(seen).toEqual(cases.map(([w]) => w));
  });

  it.each([
    ['access-diff --risk-flag-count', ['access-diff', 'base', 'head-nothing-changed', '--risk-flag-count', 'FILE']],
    ['changed-stacks --markdown-file', ['changed-stacks', 'base', 'head-nothing-changed', '--markdown-file', 'FILE']],
    ['tf --removals-file', ['tf', 'app-roles', '--refuse-replace', '--allow-removals', '--removals-file', 'FILE', '--', 'plan', '-out=app-roles.tfplan']],
  ])('%s (a file written): a directory, an empty string, a missing directory', async (_name, argv) => {
    for (const file of [tmp, '', path.join(missing, 'note.md')]) {
      const r = await cli(argv.map((a) => a.replace('FILE', file)));
      expect([file, r.code]).toEqual([file, ExitCode.usage]);
      expect([file, r.stderr]).toEqual([file, expect.not.stringMatching(RAW)]);
      expect([file, r.stderr.split('\n').length]).toEqual([file, 1]);
    }
  });

  it.each([
    ['access SOURCE', ['access', 'FILE']],
    ['who-can SOURCE', ['who-can', 'read', 'secret/data/x', 'FILE']],
    ['usage SOURCE', ['usage', 'FILE', '--log', LOG]],
  ])('%s (a synthesized output or a git ref): a missing path, a file, an empty string, /dev/zero', async (_name, argv) => {
    const file = path.join(tmp, 'a-plain-file');
    fs.writeFileSync(file, 'x');
    for (const source of [missing, file, '', '/dev/zero']) {
      const r = await cli(argv.map((a) => (a === 'FILE' ? source : a)));
      expect([source, r.code]).toEqual([source, ExitCode.usage]);
      expect([source, r.stderr]).toEqual([source, expect.not.stringMatching(RAW)]);
      expect([source, r.stderr.split('\n').length]).toEqual([source, 1]);
    }
    expect((await cli(argv.map((a) => (a === 'FILE' ? '' : a)))).stderr).toContain('SOURCE "" is an empty argument');
  });
});

describe('a file read whole is bounded: a larger one is refused before it fills memory', () => {
  it('readInputFile reads up to the bound and refuses one byte more, naming the option and the size', () => {
    const file = path.join(tmp, 'bounded.json');
    fs.writeFileSync(file, Buffer.alloc(2048, 0x20));
    const input = { option: '--usage', given: file, what: 'a usage file' };
    expect(readInputFile(input, tmp, 2048)).toHaveLength(2048);
    expect(() => readInputFile(input, tmp, 2047)).toThrow(`--usage ${file}: it is larger than 2047 bytes, more than a usage file can be; give the path of a usage file`);
    expect(() => readInputFile(input, tmp, 1024)).toThrow('it is larger than 1 KiB');
  });
});
