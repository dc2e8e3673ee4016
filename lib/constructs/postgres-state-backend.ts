import { PgBackend } from '../framework/framework';
import { ValidationProblem } from '../model/validation-problem';
import { StateBackendFactory } from './secret-store-stack';

/** Longest PostgreSQL identifier, in bytes (NAMEDATALEN - 1). */
export const MAX_POSTGRES_SCHEMA_NAME_BYTES = 63;

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
  return (stack) => {
    const schemaName = `${prefix}${stack.node.id.replace(/-/g, '_')}`;
    new PgBackend(stack, {
      // Left out on purpose (the engine falls back to PG_CONN_STR); cdktf types it as required.
      connStr: undefined as unknown as string,
      schemaName,
    });
    // PostgreSQL cuts a longer name to 63 bytes without an error: two long stack names (shards of
    // a long environment) would then share one schema, so one state.
    if (Buffer.byteLength(schemaName, 'utf8') > MAX_POSTGRES_SCHEMA_NAME_BYTES) {
      const problem = new ValidationProblem(
        'stateBackend.schemaName',
        schemaName,
        `must be at most ${MAX_POSTGRES_SCHEMA_NAME_BYTES} bytes: PostgreSQL cuts longer names without an error, so two stacks could share one state; shorten the stack name (an environment, an application's stack) or the schemaPrefix`,
      );
      stack.node.addValidation({ validate: () => [String(problem)] });
    }
  };
}
