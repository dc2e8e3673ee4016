/**
 * A file audit device on a test store, both stores: OpenBao 2.4 refuses `PUT sys/audit/<name>`
 * ("cannot enable audit device via API; use declarative, config-based audit device management
 * instead") and takes an `audit` block in its server configuration; HashiCorp Vault 1.21 enables
 * one through the API.
 */
import { RunningStore, StartStoreOptions, startStore, storeRequest } from './store-server';
import { storeKind } from './toolchain-env';

/** Starts a store of the run's kind whose file audit device writes every request to `file`. */
export async function startAuditedStore(file: string, options: StartStoreOptions = {}): Promise<RunningStore> {
  if (storeKind() === 'openbao') {
    const config = `audit "file" "file" {\n  options {\n    file_path = ${JSON.stringify(file)}\n  }\n}\n`;
    return startStore({ ...options, config });
  }
  const store = await startStore(options);
  const res = await storeRequest(store, 'PUT', 'sys/audit/file', { type: 'file', options: { file_path: file } });
  if (res.status !== 204) {
    await store.stop();
    throw new Error(`enabling the file audit device failed: HTTP ${res.status} ${JSON.stringify(res.body?.errors)}`);
  }
  return store;
}
