/**
 * The store's own write rate, the yardstick of "apply from empty": N AppRole roles and N policies
 * written straight over HTTP (no engine) on a fresh dev store of their own, at the engine's
 * parallelism (10 requests at a time, OpenTofu's default `-parallelism`), once writes only and once
 * with each write read back as the vault provider does after a create (role: GET the role and its
 * role-id; policy: GET the policy). Same bodies as the provider sends for the benchmark's
 * applications.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startLocalDevStore } from '../demo/local-dev-store';
import { mapLimited } from '../lib/private/map-limited';
import { seconds } from './store-workspace';

/** OpenTofu's default `-parallelism`: the engine's concurrent operations in one stack. */
export const ENGINE_PARALLELISM = 10;

/** Wall times of the raw writes. */
export interface RawWriteFigures {
  /** N roles + N policies, written only. */
  readonly writeS: number;
  /** N roles + N policies, each read back after its write. */
  readonly writeReadS: number;
}

export async function measureRawWrites(size: number, storeBinary: string): Promise<RawWriteFigures> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-store-bench-raw-'));
  fs.chmodSync(work, 0o700);
  const store = await startLocalDevStore(work, storeBinary);
  try {
    const call = async (method: string, route: string, body?: unknown) => {
      const r = await fetch(`${store.addr}/v1/${route}`, {
        method,
        headers: { 'X-Vault-Token': store.rootToken },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (r.status >= 300) throw new Error(`${method} ${route}: HTTP ${r.status}`);
      await r.arrayBuffer();
    };
    await call('POST', 'sys/auth/approle', { type: 'approle' });
    const indices = Array.from({ length: size }, (_, i) => i);
    // Each application is one role and one policy: 2N writes, ENGINE_PARALLELISM at a time.
    const writes = (prefix: string, readBack: boolean) =>
      mapLimited(
        indices.flatMap((i) => [
          { kind: 'policy', name: `${prefix}${i}-prod` },
          { kind: 'role', name: `${prefix}${i}-prod` },
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
    const writeS = await seconds(() => writes('raw-w-', false));
    const writeReadS = await seconds(() => writes('raw-wr-', true));
    return { writeS, writeReadS };
  } finally {
    store.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}
