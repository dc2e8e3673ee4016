/**
 * `npm run test:all` (scripts/test-all.sh, run by .ci/run): every suite runs even after one failed,
 * and the failing ones are named together. Run here with a stand-in `npm` on PATH that records each
 * call and fails the ones it is told to, so that no real suite runs.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from '../../support/paths';

/** Runs a copy of scripts/test-all.sh whose `npm` fails the `npm ARGS` calls named in `failing`. */
function runTestAll(failing: readonly string[]): { status: number | null; stdout: string; stderr: string; calls: string[] } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-test-all-'));
  try {
    fs.mkdirSync(path.join(home, 'scripts'));
    fs.copyFileSync(path.join(REPO_ROOT, 'scripts', 'test-all.sh'), path.join(home, 'scripts', 'test-all.sh'));
    const bin = path.join(home, 'bin');
    fs.mkdirSync(bin);
    const calls = path.join(home, 'calls');
    fs.writeFileSync(
      path.join(bin, 'npm'),
      ['#!/bin/sh', `echo "$*" >> '${calls}'`, ...failing.map((f) => `[ "$*" = '${f}' ] && exit 1`), 'exit 0', ''].join('\n'),
      { mode: 0o755 },
    );
    const result = spawnSync('bash', [path.join(home, 'scripts', 'test-all.sh')], {
      env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` },
      encoding: 'utf8',
    });
    const recorded = fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8').trim().split('\n') : [];
    return { status: result.status, stdout: result.stdout, stderr: result.stderr, calls: recorded };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

const EVERY_SUITE = ['test', 'run package:check', 'run test:frameworks', 'run test:store'];
/** The toolchain's build, started beside the unit tests (so its place among the calls is not fixed). */
const TOOLCHAIN = 'run --silent toolchain';
const suites = (calls: readonly string[]) => calls.filter((c) => c !== TOOLCHAIN);

describe('npm run test:all runs every suite and reports every failure', () => {
  it('all pass: every suite ran once, in order, exit 0; the toolchain was built once, beside the unit tests', () => {
    const r = runTestAll([]);
    expect(suites(r.calls)).toEqual(EVERY_SUITE);
    expect(r.calls.filter((c) => c === TOOLCHAIN)).toHaveLength(1);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('test-all: every suite passed');
  });

  it('a failed toolchain build is named, and every suite still runs, exit 1', () => {
    const r = runTestAll([TOOLCHAIN]);
    expect(suites(r.calls)).toEqual(EVERY_SUITE);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('test-all: failed: toolchain for openbao (npm run toolchain, built while the unit tests ran)\n');
  });

  it('a failing unit suite does not stop the store suites; both failures are named, exit 1', () => {
    const r = runTestAll(['test', 'run test:store']);
    expect(suites(r.calls)).toEqual(EVERY_SUITE);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('test-all: failed: unit tests (npm test)\ntest-all: failed: store suites (npm run test:store)\n');
    expect(r.stdout).not.toContain('every suite passed');
  });

  it('a failure is said where it happens, before the suites after it run (a long store run does not hide an early one)', () => {
    const r = runTestAll(['run package:check']);
    const lines = r.stdout.split('\n');
    const failedAt = lines.findIndex((l) => /^test-all: package check \(npm run package:check\) FAILED \(exit 1\) after \d+ s; the other suites still run$/.test(l));
    expect(failedAt).toBeGreaterThan(-1);
    expect(failedAt).toBeLessThan(lines.indexOf('test-all: store suites (npm run test:store)'));
    expect(lines).toContainEqual(expect.stringMatching(/^test-all: unit tests \(npm test\) passed in \d+ s$/));
    expect(r.status).toBe(1);
  });
});
