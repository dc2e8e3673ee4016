/**
 * A configuration with a pipeline keeps its state where every job finds it (issue 37): local state
 * is refused at synthesis, naming the stacks and the fix, unless `localStateReason` says why the
 * runner keeps the files; the shipped stacks/main.ts keeps it in PostgreSQL and synthesizes without a
 * database.
 */
import * as fs from 'fs';
import * as path from 'path';
import { LocalBackend } from '../../../lib/framework/framework';
import { postgresState, SecretStoreStack } from '../../../lib';
import { PlatformSettings } from '../../../lib/model/platform-settings';
import { platformConfig as shipped } from '../../../stacks/platform.config';
import { TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { readOutdir, synthesisProblems, tempOutdir } from '../../support/synthesized-platform';
import { definePlatform } from '../../../lib/platform/platform';
import { SecretStoreApp, SecretStoreValidationError } from '../../../lib';
import { withPeople } from '../../support/people-config';

const RULE =
  'must be a shared state backend for every stack the pipeline runs (these keep a local state file): a runner\'s files are gone after its job, ' +
  'so the next pipeline would plan every object as new; pass postgresState() as the third argument of definePlatform (or each stack\'s stateBackend), ' +
  'the engine reading the connection from PG_CONN_STR (a masked CI/CD variable) at plan and apply time, or another shared backend; ' +
  'if this runner keeps its files between jobs (a shell runner with a persistent disk), say so in configurationProject.localStateReason';

/** The problems of a synthesis of `config` with the given backend (default: local state). */
function problemsWith(config: typeof shipped, backend?: ReturnType<typeof postgresState>, extend?: (app: SecretStoreApp) => void): string[] {
  const app = new SecretStoreApp({ outdir: tempOutdir() });
  app.define((a) => {
    definePlatform(a, config, backend);
    extend?.(a);
  });
  try {
    app.synth();
    return [];
  } catch (e) {
    if (!(e instanceof SecretStoreValidationError)) throw e;
    return e.problems.map((p) => `[${p.constructPath}] ${p.message}`);
  }
}

describe('a configuration pipeline with local state', () => {
  it('is refused at synthesis, naming every stack that keeps local state, the field and the fix, with the other problems', () => {
    expect(synthesisProblems(shipped)).toEqual([`[ci-access/pipeline] stateBackend = ["ci-access","app-roles"]: ${RULE}`]);
    // With people and shards (the stacks a hash sharding of the shipped applications makes): every stack the pipeline runs, reported with the other problems.
    const config = { ...withPeople(), configurationProject: shipped.configurationProject, applicationSharding: { by: 'hash' as const, shards: 2 }, ciJobTimeout: 'x' as never };
    const problems = synthesisProblems(config);
    expect(problems).toContainEqual(`[ci-access/pipeline] stateBackend = ["ci-access","app-roles","app-roles-01","people"]: ${RULE}`);
    expect(problems.length).toBeGreaterThan(1);
  });

  it('a shared backend passes (postgresState()); a stack of the user with local state beside it is still named', () => {
    expect(problemsWith(shipped, postgresState())).toEqual([]);
    const userStack = (a: SecretStoreApp) => new SecretStoreStack(a, 'extra', { settings: new PlatformSettings(shipped.settings) });
    expect(problemsWith(shipped, postgresState(), userStack)).toEqual([`[ci-access/pipeline] stateBackend = ["extra"]: ${RULE}`]);
    // An explicit LocalBackend is local state too.
    const explicit = (a: SecretStoreApp) =>
      new SecretStoreStack(a, 'extra', { settings: new PlatformSettings(shipped.settings), stateBackend: (s) => void new LocalBackend(s, { path: '/srv/state/extra.tfstate' }) });
    expect(problemsWith(shipped, postgresState(), explicit)).toEqual([`[ci-access/pipeline] stateBackend = ["extra"]: ${RULE}`]);
  });

  it('without a pipeline, local state stays the default', () => {
    const { configurationProject: _pipeline, ...noPipeline } = shipped;
    expect(synthesisProblems(noPipeline)).toEqual([]);
  });

  it('localStateReason opts out, once it says why (one line, at least 10 visible characters)', () => {
    const reason = (localStateReason: string) => ({ ...shipped, configurationProject: { ...shipped.configurationProject!, localStateReason } });
    expect(synthesisProblems(reason('shell runner on ci-01, state kept in /srv/secretstore-iac'))).toEqual([]);
    expect(synthesisProblems(reason(TEST_LOCAL_STATE_REASON))).toEqual([]);
    expect(synthesisProblems(reason('\u200b\u200b\u200b\u200b\u200b\u200b\u200b\u200b\u200b\u200bok'))).toEqual([
      '[ci-access/pipeline] localStateReason = "\\u200b\\u200b\\u200b\\u200b\\u200b\\u200b\\u200b\\u200b\\u200b\\u200bok": must say why the pipeline\'s runner keeps the state files between jobs (at least 10 characters; white space and invisible characters (zero-width, format characters) do not count)',
    ]);
    expect(synthesisProblems(reason('shell runner\nwith disk'))[0]).toMatch(/^\[ci-access\/pipeline\] localStateReason = "shell runner\\nwith disk": must be one line of printable text/);
    expect(synthesisProblems({ ...shipped, configurationProject: { ...shipped.configurationProject!, localStateReason: 42 as never } })[0]).toMatch(/^\[ci-access\/pipeline\] localStateReason = 42: must be/);
  });
});

describe('the shipped stacks/main.ts', () => {
  it('synthesizes without a database, every stack\'s state in PostgreSQL, the connection left to PG_CONN_STR', () => {
    const outdir = tempOutdir();
    const saved = process.env.CDKTF_OUTDIR;
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    process.env.CDKTF_OUTDIR = outdir;
    try {
      jest.isolateModules(() => require('../../../stacks/main'));
    } finally {
      if (saved === undefined) delete process.env.CDKTF_OUTDIR;
      else process.env.CDKTF_OUTDIR = saved;
      log.mockRestore();
    }
    const { stacks } = readOutdir(outdir);
    expect(Object.keys(stacks).sort()).toEqual(['app-roles', 'ci-access']);
    for (const [id, stack] of Object.entries(stacks)) {
      expect(stack.terraform.backend).toEqual({ pg: { schema_name: `secretstore_iac_${id.replace(/-/g, '_')}` } });
    }
    expect(fs.existsSync(path.join(outdir, 'ci', 'secretstore-iac.gitlab-ci.yml'))).toBe(true);
  });
});
