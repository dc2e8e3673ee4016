import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../../lib/cli/run-cli';

// Operator commands given a wrong --env-file: a link or a directory is a usage mistake (exit 2),
// refused before the store is asked anything. The same refusals on the real store, with Secret IDs
// counted, are in test/store/operator.store.test.ts.

describe('operator commands refuse a wrong --env-file as a usage error', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-operator-'));
  const target = path.join(dir, 'root-only.conf');
  fs.writeFileSync(target, 'ROOT_ONLY=do-not-copy\n', { mode: 0o600 });
  const link = path.join(dir, 'linked.env');
  fs.symlinkSync(target, link);
  const directory = path.join(dir, 'a-directory');
  fs.mkdirSync(directory);

  // A stand-in store that counts the requests it gets: a refusal must come before any of them.
  let requests = 0;
  let server: http.Server;
  let address: string;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      requests += 1;
      res.writeHead(500);
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  async function run(args: string[]) {
    const err: string[] = [];
    const code = await runCli(args, {
      env: { PATH: process.env.PATH, SECRETSTORE_ADDR: address, VAULT_TOKEN: 'test-token-not-used' },
      cwd: dir,
      isTerminal: false,
      stdout: () => undefined,
      stderr: (l) => err.push(l),
    });
    return { code, stderr: err.join('\n') };
  }

  const LINK = `refusing ${link}: it is a symbolic link; give the path of the env file itself (a link could make the command read or write another file)`;
  const DIRECTORY = `${directory} is a directory: --env-file takes the path of the env file inside it, e.g. ${directory}/orchestrator.env`;

  it.each([
    ['provision', ['registry', '--env-file', link], LINK],
    ['rotate-secret-id', ['registry', '--env-file', link], LINK],
    ['check-approle', ['--env-file', link], LINK],
    ['provision', ['registry', '--env-file', directory], DIRECTORY],
    ['rotate-secret-id', ['registry', '--env-file', directory], DIRECTORY],
    ['check-approle', ['--env-file', directory], DIRECTORY],
  ])('%s %j exits 2 before any store request', async (command, args, message) => {
    requests = 0;
    const r = await run([command, ...(args as string[])]);
    // The message is the same as before; the dispatcher adds the pointer to --help it gives every usage error.
    expect([r.code, r.stderr]).toEqual([2, `secretstore-iac ${command}: ${message} (see secretstore-iac ${command} --help)`]);
    expect(requests).toBe(0);
    expect(fs.readFileSync(target, 'utf8')).toBe('ROOT_ONLY=do-not-copy\n');
  });

  it('a directory that does not exist stays a failure to act (exit 3), not a usage error', async () => {
    const r = await run(['provision', 'registry', '--env-file', path.join(dir, 'no', 'app.env')]);
    expect([r.code, r.stderr]).toEqual([3, `secretstore-iac provision: cannot write ${dir}/no/app.env: the directory ${dir}/no does not exist`]);
  });
});

describe('--credentials-file names the env file; --env-file is its older name', () => {
  const run = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, { env: {}, cwd: os.tmpdir(), isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('the help of provision, rotate-secret-id and check-approle names --credentials-file and says why not --env-file under npx', async () => {
    for (const command of ['provision', 'rotate-secret-id', 'check-approle']) {
      const help = await run([command, '--help']);
      expect(help.out).toContain('--credentials-file PATH');
      expect(help.out).toContain('with npx on Node 20, node itself takes --env-file and stops: use --credentials-file');
    }
  });

  it('both names for two different files is a usage error (exit 2) that names both', async () => {
    const r = await run(['provision', 'orchestrator-dev', '--credentials-file', '/tmp/a.env', '--env-file', '/tmp/b.env']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--credentials-file /tmp/a.env and --env-file /tmp/b.env name two files');
  });

  it('without either, provision names the option it needs', async () => {
    const r = await run(['provision', 'orchestrator-dev']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--credentials-file PATH is required');
  });
});
