/**
 * The store's own write rate, the yardstick of "apply from empty": N AppRole roles and N policies
 * written straight over HTTP (no engine) at the engine's parallelism (10 requests at a time,
 * OpenTofu's default `-parallelism`), once writes only and once with each write read back as the
 * vault provider does after a create (role: GET the role and its role-id; policy: GET the policy).
 * Same bodies as the provider sends for the benchmark's applications. Each pass runs on a fresh dev
 * store of its own, as the apply from empty starts from a store without the applications (until
 * 2026-11-26 the read-back pass ran on the store the writes-only pass had filled with 2N objects).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startLocalDevStore } from '../demo/local-dev-store';
import { mapLimited } from '../lib/private/map-limited';
import { processCpuSeconds } from './process-cpu';
import { seconds } from './store-workspace';

/** OpenTofu's default `-parallelism`: the engine's concurrent operations in one stack. */
export const ENGINE_PARALLELISM = 10;

/** Wall times of the raw writes. */
export interface RawWriteFigures {
  /** N roles + N policies, written only. */
  readonly writeS: number;
  /** N roles + N policies, each read back after its write. */
  readonly writeReadS: number;
  /** CPU seconds of the store during the write-and-read-back pass. */
  readonly writeReadStoreCpuS: number;
  /** CPU seconds of this process (the HTTP client) during that pass. */
  readonly writeReadClientCpuS: number;
}

export async function measureRawWrites(size: number, storeBinary: string): Promise<RawWriteFigures> {
  const writes = await onFreshStore(storeBinary, (call) => writeAll(call, size, false));
  const writeRead = await onFreshStore(storeBinary, (call) => writeAll(call, size, true));
  return { writeS: writes.s, writeReadS: writeRead.s, writeReadStoreCpuS: writeRead.storeCpuS, writeReadClientCpuS: writeRead.clientCpuS };
}

/** What one pass cost. */
interface PassFigures {
  readonly s: number;
  readonly storeCpuS: number;
  readonly clientCpuS: number;
}

type StoreCall = (method: string, route: string, body?: unknown) => Promise<void>;

/** Wall and CPU seconds of `work` on a fresh dev store of its own (AppRole enabled first, not timed). */
async function onFreshStore(storeBinary: string, work: (call: StoreCall) => Promise<unknown>): Promise<PassFigures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-store-bench-raw-'));
  fs.chmodSync(dir, 0o700);
  const store = await startLocalDevStore(dir, storeBinary);
  try {
    const call: StoreCall = async (method, route, body) => {
      const r = await fetch(`${store.addr}/v1/${route}`, {
        method,
        headers: { 'X-Vault-Token': store.rootToken },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (r.status >= 300) throw new Error(`${method} ${route}: HTTP ${r.status}`);
      await r.arrayBuffer();
    };
    await call('POST', 'sys/auth/approle', { type: 'approle' });
    const storeCpu0 = processCpuSeconds(store.process.pid);
    const client0 = process.cpuUsage();
    const s = await seconds(() => work(call));
    const client = process.cpuUsage(client0);
    return { s, storeCpuS: processCpuSeconds(store.process.pid) - storeCpu0, clientCpuS: (client.user + client.system) / 1e6 };
  } finally {
    store.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** N roles + N policies (one of each per application), ENGINE_PARALLELISM at a time, each read back when asked. */
function writeAll(call: StoreCall, size: number, readBack: boolean): Promise<unknown> {
  const names = Array.from({ length: size }, (_, i) => `raw-${i}-prod`);
  return mapLimited(
    names.flatMap((name) => [
      { kind: 'policy', name },
      { kind: 'role', name },
    ]),
    ENGINE_PARALLELISM,
    async ({ kind, name }) => {
      if (kind === 'policy') {
        await call('PUT', `sys/policies/acl/${name}`, { policy: `# Policy of ${name}\npath "secret/data/acme/prod/${name}/*" {\n  capabilities = ["read"]\n}\n` });
        if (readBack) await call('GET', `sys/policies/acl/${name}`);
      } else {
        await call('POST', `auth/approle/role/${name}`, {
          bind_secret_id: true,
          secret_id_ttl: 0,
          secret_id_num_uses: 0,
          token_policies: [name],
          token_ttl: 43200,
          token_max_ttl: 86400,
          token_explicit_max_ttl: 0,
          token_period: 0,
          token_num_uses: 0,
          token_type: 'service',
          token_no_default_policy: false,
        });
        if (readBack) {
          await call('GET', `auth/approle/role/${name}`);
          await call('GET', `auth/approle/role/${name}/role-id`);
        }
      }
    },
  );
}
