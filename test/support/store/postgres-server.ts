/**
 * A throwaway PostgreSQL server (Debian's packages) on 127.0.0.1, for state-backend tests. Started
 * with pg_ctl, stopped by the postmaster's process id; its data directory is deleted on stop.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from './store-server';

/** A running PostgreSQL server with one database. */
export interface RunningPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/<db>?sslmode=disable` (trust authentication, no password). */
  readonly connStr: string;
  /** Postmaster process id. */
  readonly pid: number;
  stop(): Promise<void>;
}

/** The newest Debian PostgreSQL server binaries, or SECRETSTORE_IAC_PG_BIN. */
export function postgresBinDir(): string {
  if (process.env.SECRETSTORE_IAC_PG_BIN) return process.env.SECRETSTORE_IAC_PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  if (versions.length === 0) throw new Error('PostgreSQL server binaries not found: apt-get install postgresql (or set SECRETSTORE_IAC_PG_BIN)');
  return path.join(root, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
}

/** Starts PostgreSQL and creates database `db`. The server refuses to run as root, so root runs it as `postgres`. */
export async function startPostgres(db = 'tfstate'): Promise<RunningPostgres> {
  const bin = postgresBinDir();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  const run = (cmd: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : path.join(bin, cmd), asRoot ? ['-u', 'postgres', '--', path.join(bin, cmd), ...args] : args, {
      stdio: 'pipe',
      cwd: dir,
    });
  const data = path.join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  run('pg_ctl', [
    '-D', data, '-w', '-l', path.join(dir, 'server.log'), 'start',
    '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
  ]);
  const pid = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const stop = async () => {
    try {
      process.kill(pid, 'SIGINT'); // fast shutdown
      for (let i = 0; i < 100; i++) {
        process.kill(pid, 0);
        await new Promise((r) => setTimeout(r, 100));
      }
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    execFileSync(path.join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', db], { stdio: 'pipe' });
  } catch (e) {
    await stop();
    throw e;
  }
  return { connStr: `postgres://postgres@127.0.0.1:${port}/${db}?sslmode=disable`, pid, stop };
}
