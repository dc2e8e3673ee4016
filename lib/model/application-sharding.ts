import { createHash } from 'crypto';
import { identifierNameProblems } from './identifier-name';
import { expectEnum, expectInteger, expectShape, optional, ownValue, PropsSchema } from './props-check';
import { ValidationProblem } from './validation-problem';

/**
 * How applications are split across stacks:
 *
 * - `none`: every application in the mount stack (`app-roles`), as before sharding existed;
 * - `environment`: one stack per environment (`app-roles-dev`, `app-roles-shared`);
 * - `hash`: {@link ApplicationSharding.shards} stacks, an application in the one its role name
 *   hashes to (`app-roles-03`);
 * - `environment-hash`: both, per environment (`app-roles-dev-03`).
 *
 * An application's own `stack` wins over all of them (`app-roles-<stack>`).
 */
export type ApplicationShardingMode = 'none' | 'environment' | 'hash' | 'environment-hash';

/** The modes of {@link ApplicationShardingMode}, in the order the documentation lists them. */
export const APPLICATION_SHARDING_MODES: readonly ApplicationShardingMode[] = ['none', 'environment', 'hash', 'environment-hash'];

/** Most hash shards: shard numbers are two digits (`00`..`99`), so that stack names sort in order. */
export const MAX_APPLICATION_SHARDS = 100;

/** Longest explicit `stack` of an application: the stack name also names a state file or a PostgreSQL schema (63 bytes at most). */
export const MAX_APPLICATION_STACK_LENGTH = 32;

/** The sharding of the application stacks (docs/sharding.md). */
export interface ApplicationSharding {
  /**
   * What decides an application's stack, unless the application gives its own `stack`.
   * @default 'none'
   */
  readonly by?: ApplicationShardingMode;
  /**
   * Number of hash shards, a whole number from 1 to 100; required with `hash` and
   * `environment-hash`, not allowed otherwise. Changing it moves applications between stacks: run
   * `secretstore-iac moves` before the plans.
   */
  readonly shards?: number;
}

/** What the shard key reads of an application. */
export interface ShardedApplication {
  /** The role name (the hash input: unique within the auth method, SSI-R1). */
  readonly roleName: string;
  /** The environment (`dev`). */
  readonly environment: string;
  /** The application's explicit stack, when it gives one. */
  readonly stack?: string;
}

/** The run-time checks of {@link ApplicationSharding}. */
export const APPLICATION_SHARDING_SCHEMA: PropsSchema = {
  by: optional(expectEnum(APPLICATION_SHARDING_MODES)),
  shards: optional(expectInteger),
};

/**
 * The shard an application goes to: a stable hash of its role name into `shards` shards. The hash
 * is the first 8 hex digits of SHA-256 of the UTF-8 role name, as an unsigned number, modulo
 * `shards`; any tool can repeat it (`printf %s orchestrator-dev | sha256sum`). It depends on the role
 * name and `shards` only, never on the other applications, so adding one moves no other.
 */
export function hashShard(roleName: string, shards: number): number {
  return parseInt(createHash('sha256').update(roleName, 'utf8').digest('hex').slice(0, 8), 16) % shards;
}

/** A shard number as it appears in a stack name: two digits (`03`). */
export function shardLabel(shard: number): string {
  return String(shard).padStart(2, '0');
}

/**
 * The shard key of an application: the suffix of its stack's name after the mount stack's
 * (`dev`, `03`, `dev-03`, its own `stack`), or undefined for the mount stack itself (sharding `none`).
 * Expects valid sharding (see {@link applicationShardingProblems}); `shards` below 1 counts as 1.
 */
export function applicationShardKey(sharding: ApplicationSharding, app: ShardedApplication): string | undefined {
  if (app.stack !== undefined) return app.stack;
  const shards = Math.max(1, Math.floor(sharding.shards ?? 1));
  switch (sharding.by ?? 'none') {
    case 'environment':
      return app.environment;
    case 'hash':
      return shardLabel(hashShard(app.roleName, shards));
    case 'environment-hash':
      return `${app.environment}-${shardLabel(hashShard(app.roleName, shards))}`;
    default:
      return undefined;
  }
}

/** The name of an application's stack: `<mountStack>` or `<mountStack>-<key>` ({@link applicationShardKey}). */
export function applicationStackName(mountStack: string, sharding: ApplicationSharding, app: ShardedApplication): string {
  const key = applicationShardKey(sharding, app);
  return key === undefined ? mountStack : `${mountStack}-${key}`;
}

/**
 * The problems of a sharding declaration, every one at once: its type, `by` one of the modes,
 * `shards` a whole number 1..100 given exactly when the mode hashes.
 * @param field how the declaration is named in problems (`sharding`, `applicationSharding`)
 */
export function applicationShardingProblems(field: string, sharding: unknown): ValidationProblem[] {
  if (sharding === undefined) return [];
  const typeProblems = expectShape(APPLICATION_SHARDING_SCHEMA, 'an object { by, shards? }')(field, sharding);
  if (typeProblems.length > 0) return typeProblems;
  const by = ownValue<ApplicationShardingMode>(sharding, 'by') ?? 'none';
  const shards = ownValue<number>(sharding, 'shards');
  const hashes = by === 'hash' || by === 'environment-hash';
  if (hashes && shards === undefined) {
    return [new ValidationProblem(`${field}.shards`, shards, `is required with by "${by}": the number of hash shards, 1 to ${MAX_APPLICATION_SHARDS}`)];
  }
  if (!hashes && shards !== undefined) {
    return [new ValidationProblem(`${field}.shards`, shards, `is only read with by "hash" or "environment-hash", not "${by}": remove it, or choose a hashing mode`)];
  }
  if (shards !== undefined && (shards < 1 || shards > MAX_APPLICATION_SHARDS)) {
    return [new ValidationProblem(`${field}.shards`, shards, `must be a whole number from 1 to ${MAX_APPLICATION_SHARDS} (shard numbers are two digits)`)];
  }
  return [];
}

/**
 * The problems of an application's explicit `stack`: a lower-case name (letters, digits, inner
 * hyphens) of at most 32 characters, since it becomes part of a stack name, a state file name and a
 * PostgreSQL schema name.
 */
export function applicationStackProblems(field: string, stack: unknown): ValidationProblem[] {
  if (stack === undefined) return [];
  if (typeof stack !== 'string') return [new ValidationProblem(field, stack, 'must be text (a string): the stack\'s name after "app-roles-"')];
  const problems = identifierNameProblems(field, stack);
  if (problems.length === 0 && stack.length > MAX_APPLICATION_STACK_LENGTH) {
    problems.push(new ValidationProblem(field, stack, `must be at most ${MAX_APPLICATION_STACK_LENGTH} characters: it names a stack, its state file and its PostgreSQL schema`));
  }
  return problems;
}
