import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';

// `secretstore-iac tf`: what it refuses before any engine runs. Running it against a real store is
// proven in test/store/engine-command.store.test.ts.

async function tf(args: string[], env: NodeJS.ProcessEnv, cwd = os.tmpdir()) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['tf', ...args], { env, cwd, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('secretstore-iac tf', () => {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-tf-'));
  fs.mkdirSync(path.join(outdir, 'stacks', 'ci-access'), { recursive: true });
  fs.writeFileSync(path.join(outdir, 'stacks', 'ci-access', 'cdk.tf.json'), '{}');
  // A fake engine that would prove it ran by printing its address.
  const engine = path.join(outdir, 'fake-engine');
  fs.writeFileSync(engine, '#!/bin/sh\necho "engine ran in $(pwd) with VAULT_ADDR=$VAULT_ADDR args=$*"\nexit 2\n', { mode: 0o755 });

  it('fails fast with the spec\'s message when neither SECRETSTORE_ADDR nor VAULT_ADDR is set', async () => {
    const r = await tf(['ci-access', '--outdir', outdir, '--engine', engine, '--', 'plan'], { PATH: process.env.PATH });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('SECRETSTORE_ADDR (or VAULT_ADDR / BAO_ADDR) is unset or empty');
    expect(r.stdout).not.toContain('engine ran');
  });

  it('passes SECRETSTORE_ADDR to the engine as VAULT_ADDR, in the stack directory, with the engine\'s exit code', async () => {
    const r = await tf(['ci-access', '--outdir', outdir, '--engine', engine, '--', 'plan', '-detailed-exitcode'], {
      PATH: process.env.PATH,
      SECRETSTORE_ADDR: 'https://secrets.example:8200',
    });
    expect(r.stdout).toBe(
      `engine ran in ${fs.realpathSync(path.join(outdir, 'stacks', 'ci-access'))} with VAULT_ADDR=https://secrets.example:8200 args=plan -detailed-exitcode`,
    );
    expect(r.code).toBe(2);
  });

  it('refuses a stack that was not synthesized', async () => {
    const r = await tf(['nope', '--outdir', outdir, '--engine', engine, '--', 'plan'], { SECRETSTORE_ADDR: 'https://s.example' });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('no synthesized stack at');
  });

  it('is a usage error without engine arguments', async () => {
    const r = await tf(['ci-access', '--outdir', outdir], { SECRETSTORE_ADDR: 'https://s.example' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('give the engine\'s arguments after "--"');
  });
});
