import { createHash } from 'crypto';
import {
  applicationShardingProblems,
  applicationShardKey,
  applicationStackName,
  applicationStackProblems,
  hashShard,
  MAX_APPLICATION_SHARDS,
  shardLabel,
} from '../../../lib';

// The shard key on its own (docs/sharding.md): no App, no stack, no cdktf.

const app = (roleName: string, environment = 'dev', stack?: string) => ({ roleName, environment, ...(stack === undefined ? {} : { stack }) });
const roleNames = Array.from({ length: 500 }, (_, i) => `app-${i}-dev`);

describe('Sharding off (the default): every application stays in the mount stack', () => {
  it('no sharding and by "none" both give the mount stack', () => {
    for (const sharding of [{}, { by: 'none' as const }]) {
      expect(applicationShardKey(sharding, app('orchestrator-dev'))).toBeUndefined();
      expect(applicationStackName('app-roles', sharding, app('orchestrator-dev'))).toBe('app-roles');
    }
  });
});

describe('An explicit stack on the application wins over every mode', () => {
  it.each([{}, { by: 'environment' as const }, { by: 'hash' as const, shards: 8 }, { by: 'environment-hash' as const, shards: 4 }])('with %j', (sharding) => {
    expect(applicationStackName('app-roles', sharding, app('billing-dev', 'dev', 'payments'))).toBe('app-roles-payments');
  });
});

describe('By environment: one stack per environment', () => {
  it('app-roles-<environment>', () => {
    expect(applicationStackName('app-roles', { by: 'environment' }, app('orchestrator-dev', 'dev'))).toBe('app-roles-dev');
    expect(applicationStackName('app-roles', { by: 'environment' }, app('gitlab-role', 'shared'))).toBe('app-roles-shared');
  });
});

describe('By hash: a stable hash of the role name into N shards', () => {
  it('is the first 8 hex digits of SHA-256 of the role name, modulo N, as documented', () => {
    for (const name of roleNames.slice(0, 50)) {
      const documented = parseInt(createHash('sha256').update(name).digest('hex').slice(0, 8), 16) % 8;
      expect(hashShard(name, 8)).toBe(documented);
    }
  });

  it('names the shard with two digits: app-roles-00 .. app-roles-<N-1>', () => {
    const names = new Set(roleNames.map((r) => applicationStackName('app-roles', { by: 'hash', shards: 8 }, app(r))));
    expect([...names].sort()).toEqual(['00', '01', '02', '03', '04', '05', '06', '07'].map((n) => `app-roles-${n}`));
    expect(shardLabel(3)).toBe('03');
    expect(shardLabel(99)).toBe('99');
  });

  it('depends on the role name and N only: not on the environment, the other applications or their order', () => {
    const first = roleNames.map((r) => applicationShardKey({ by: 'hash', shards: 16 }, app(r, 'dev')));
    const again = [...roleNames].reverse().map((r) => applicationShardKey({ by: 'hash', shards: 16 }, app(r, 'prod'))).reverse();
    expect(again).toEqual(first);
  });

  it('spreads applications over the shards (no shard holds more than twice its share of 500)', () => {
    const counts = new Map<number, number>();
    roleNames.forEach((r) => counts.set(hashShard(r, 10), (counts.get(hashShard(r, 10)) ?? 0) + 1));
    expect(counts.size).toBe(10);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(100);
  });

  it('one shard puts everything in app-roles-00', () => {
    expect(new Set(roleNames.map((r) => applicationShardKey({ by: 'hash', shards: 1 }, app(r))))).toEqual(new Set(['00']));
  });
});

describe('By environment and hash: hash shards per environment', () => {
  it('app-roles-<environment>-<shard>', () => {
    const shard = shardLabel(hashShard('orchestrator-dev', 4));
    expect(applicationStackName('app-roles', { by: 'environment-hash', shards: 4 }, app('orchestrator-dev', 'dev'))).toBe(`app-roles-dev-${shard}`);
  });
});

describe('Validation: every problem of the sharding, named by field', () => {
  it('accepts the documented forms', () => {
    for (const s of [undefined, {}, { by: 'none' }, { by: 'environment' }, { by: 'hash', shards: 1 }, { by: 'hash', shards: MAX_APPLICATION_SHARDS }, { by: 'environment-hash', shards: 4 }]) {
      expect({ s, problems: applicationShardingProblems('sharding', s) }).toEqual({ s, problems: [] });
    }
  });

  it('refuses shards that are no whole number from 1 to 100, missing where needed, or given where unread', () => {
    const problem = (s: unknown) => applicationShardingProblems('sharding', s).map(String);
    expect(problem({ by: 'hash' })).toEqual([expect.stringMatching(/^sharding\.shards = undefined: is required with by "hash"/)]);
    expect(problem({ by: 'hash', shards: 0 })).toEqual([expect.stringMatching(/^sharding\.shards = 0: must be a whole number from 1 to 100/)]);
    expect(problem({ by: 'hash', shards: 101 })).toEqual([expect.stringMatching(/^sharding\.shards = 101: must be a whole number from 1 to 100/)]);
    expect(problem({ by: 'hash', shards: 2.5 })).toEqual(['sharding.shards = 2.5: must be a whole number']);
    expect(problem({ by: 'hash', shards: '8' })).toEqual([expect.stringMatching(/^sharding\.shards = "8": must be a whole number, not text/)]);
    expect(problem({ by: 'environment', shards: 4 })).toEqual([expect.stringMatching(/^sharding\.shards = 4: is only read with by "hash" or "environment-hash"/)]);
  });

  it('refuses an unknown mode, an unknown field and a non-object, all at once', () => {
    expect(applicationShardingProblems('sharding', { by: 'region', shard: 4 }).map(String)).toEqual([
      'sharding.by = "region": must be one of "none", "environment", "hash", "environment-hash"',
      'sharding.shard = 4: is not a field here: the fields are by, shards',
    ]);
    expect(applicationShardingProblems('sharding', 'hash').map(String)).toEqual([expect.stringMatching(/^sharding = "hash": must be an object \{ by, shards\? \}/)]);
  });

  it('an explicit stack is a lower-case name of at most 32 characters', () => {
    expect(applicationStackProblems('stack', 'payments')).toEqual([]);
    expect(applicationStackProblems('stack', 'Payments').map(String)).toEqual([expect.stringMatching(/^stack = "Payments": must be lower-case letters, digits and inner hyphens; it contains upper case/)]);
    expect(applicationStackProblems('stack', '-x').map(String)).toEqual([expect.stringMatching(/^stack = "-x": must be lower-case letters/)]);
    expect(applicationStackProblems('stack', 'a'.repeat(33)).map(String)).toEqual([expect.stringMatching(/must be at most 32 characters/)]);
    expect(applicationStackProblems('stack', 7).map(String)).toEqual([expect.stringMatching(/^stack = 7: must be text/)]);
  });
});
