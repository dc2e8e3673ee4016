import { PgBackend } from 'cdktf';
import { StateBackendFactory } from './secret-store-stack';

/** Properties of {@link postgresState}. */
export interface PostgresStateProps {
  /**
   * Prefix of the per-stack schema names.
   * @default 'secretstore_iac_' (schemas `secretstore_iac_ci_access`, `secretstore_iac_app_roles`)
   */
  readonly schemaPrefix?: string;
}

/**
 * Terraform state in PostgreSQL, one schema per stack, shared by everyone who plans and applies,
 * with locking (the engine's `pg` backend takes an advisory lock per state).
 *
 * The connection string is not synthesized: it usually holds a password, so the engine reads it
 * from `PG_CONN_STR` at init/plan/apply time (`postgres://user:pass@host/db?sslmode=require`).
 *
 * ```ts
 * definePlatform(app, platformConfig, postgresState());
 * ```
 */
export function postgresState(props: PostgresStateProps = {}): StateBackendFactory {
  const prefix = props.schemaPrefix ?? 'secretstore_iac_';
  return (stack) =>
    new PgBackend(stack, {
      // Left out on purpose (the engine falls back to PG_CONN_STR); cdktf types it as required.
      connStr: undefined as unknown as string,
      schemaName: `${prefix}${stack.node.id.replace(/-/g, '_')}`,
    });
}
