import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { chooseEngine } from '../../../lib/engine/engine-binary';
import { buildEngineRunEnvironment } from '../../../lib/engine/engine-run-environment';

const findEngine = (wanted: string | undefined, env: NodeJS.ProcessEnv): string => chooseEngine(wanted, env).path;
import { runCli } from '../../../lib/cli/run-cli';

// The one engine lookup `tf` and `adopt` share: the engine that reads a stack's state for `adopt`
// must be the one `tf` applies it with.

describe('chooseEngine', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-engine-'));
  const pathDir = path.join(dir, 'bin');
  fs.mkdirSync(pathDir);
  const executable = (file: string) => {
    fs.writeFileSync(file, '#!/bin/sh\n', { mode: 0o755 });
    return file;
  };
  const tofuOnPath = executable(path.join(pathDir, 'tofu'));
  const terraformOnPath = executable(path.join(pathDir, 'terraform'));
  const named = executable(path.join(dir, 'named-engine'));
  const fromEngineVariable = executable(path.join(dir, 'engine-variable'));
  const fromTofuVariable = executable(path.join(dir, 'tofu-variable'));

  it.each([
    ['--engine before every variable', named, { SECRETSTORE_IAC_ENGINE: fromEngineVariable, SECRETSTORE_IAC_TOFU: fromTofuVariable }, named],
    ['SECRETSTORE_IAC_ENGINE before SECRETSTORE_IAC_TOFU', undefined, { SECRETSTORE_IAC_ENGINE: fromEngineVariable, SECRETSTORE_IAC_TOFU: fromTofuVariable }, fromEngineVariable],
    ['SECRETSTORE_IAC_TOFU before tofu on PATH', undefined, { SECRETSTORE_IAC_TOFU: fromTofuVariable }, fromTofuVariable],
    ['an empty SECRETSTORE_IAC_ENGINE is unset', undefined, { SECRETSTORE_IAC_ENGINE: '', SECRETSTORE_IAC_TOFU: fromTofuVariable }, fromTofuVariable],
    ['tofu on PATH without any', undefined, {}, tofuOnPath],
    ['a name is looked up on PATH', 'terraform', { SECRETSTORE_IAC_TOFU: fromTofuVariable }, terraformOnPath],
  ])('%s', (_why, wanted, variables, expected) => {
    expect(findEngine(wanted, { PATH: pathDir, ...variables })).toBe(expected);
  });

  it('falls back to terraform when PATH has no tofu', () => {
    const onlyTerraform = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-engine-tf-'));
    const terraform = executable(path.join(onlyTerraform, 'terraform'));
    expect(findEngine(undefined, { PATH: onlyTerraform })).toBe(terraform);
  });

  it('names what it looked for when nothing is found', () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-engine-empty-'));
    expect(() => findEngine(undefined, { PATH: empty })).toThrow('no engine found: tofu or terraform is not on PATH');
    expect(() => findEngine(undefined, { PATH: empty, SECRETSTORE_IAC_TOFU: '/nowhere/tofu' })).toThrow('no engine found: /nowhere/tofu is not on PATH');
  });

  it('without a named engine, takes the OpenTofu npm run toolchain built before PATH; a CLI configuration set by the caller changes nothing (the run writes its own)', () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-engine-cache-'));
    fs.mkdirSync(path.join(cache, 'bin'));
    const built = executable(path.join(cache, 'bin', 'tofu'));
    fs.writeFileSync(path.join(cache, 'tofurc'), 'provider_installation {}\n');
    expect(chooseEngine(undefined, { PATH: pathDir, SECRETSTORE_IAC_CACHE: cache })).toEqual({ path: built, why: 'the OpenTofu npm run toolchain built' });
    expect(chooseEngine(undefined, { PATH: pathDir, SECRETSTORE_IAC_CACHE: cache, TF_CLI_CONFIG_FILE: '/nowhere/tofurc' })).toEqual({ path: built, why: 'the OpenTofu npm run toolchain built' });
    expect(chooseEngine(undefined, { PATH: pathDir, SECRETSTORE_IAC_CACHE: cache, SECRETSTORE_IAC_TOFU: fromTofuVariable })).toEqual({ path: fromTofuVariable, why: 'SECRETSTORE_IAC_TOFU' });
    // Without the built one: PATH, and the reason says so.
    expect(chooseEngine(undefined, { PATH: pathDir, SECRETSTORE_IAC_CACHE: path.join(cache, 'none') })).toEqual({ path: tofuOnPath, why: 'tofu on PATH' });
  });

  it('gives the engine the store address as VAULT_ADDR, whatever the caller\'s VAULT_ADDR was', () => {
    const run = buildEngineRunEnvironment({ PATH: '/bin', VAULT_ADDR: 'https://old.example' }, { cwd: process.cwd(), address: 'https://s.example' });
    run.dispose();
    expect(run.env).toMatchObject({ PATH: '/bin', VAULT_ADDR: 'https://s.example' });
  });
});

describe('tf and adopt resolve the same engine', () => {
  // A synthesized output with one empty stack: enough for both commands to reach the engine lookup.
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-engine-cli-'));
  fs.mkdirSync(path.join(outdir, 'stacks', 'ci-access'), { recursive: true });
  fs.writeFileSync(path.join(outdir, 'stacks', 'ci-access', 'cdk.tf.json'), '{}');
  fs.writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify({ stacks: { 'ci-access': { synthesizedStackPath: 'stacks/ci-access/cdk.tf.json' } } }));

  async function run(args: string[], env: NodeJS.ProcessEnv) {
    const err: string[] = [];
    const code = await runCli(args, { env, cwd: os.tmpdir(), isTerminal: false, stdout: () => undefined, stderr: (l) => err.push(l) });
    return { code, stderr: err.join('\n') };
  }

  it.each([
    ['SECRETSTORE_IAC_TOFU', { SECRETSTORE_IAC_TOFU: '/nowhere/tofu-from-toolchain' }, '/nowhere/tofu-from-toolchain'],
    ['SECRETSTORE_IAC_ENGINE', { SECRETSTORE_IAC_ENGINE: '/nowhere/engine', SECRETSTORE_IAC_TOFU: '/nowhere/tofu' }, '/nowhere/engine'],
  ])('both look for the engine %s names', async (_name, variables, looked) => {
    // No engine exists at the named path: each command says which one it looked for, before any store request.
    const env = { PATH: fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-engine-nopath-')), SECRETSTORE_ADDR: 'http://127.0.0.1:1', ...variables };
    const tf = await run(['tf', 'ci-access', '--outdir', outdir, '--', 'plan'], env);
    const adopt = await run(['adopt', 'ci-access', '--outdir', outdir], env);
    const message = `no engine found: ${looked} is not on PATH`;
    expect(tf.stderr).toContain(message);
    expect(adopt.stderr).toContain(message);
    expect([tf.code, adopt.code]).toEqual([3, 3]);
  });
});
