/**
 * A job's working directory for the `secretstore-iac pipeline` unit tests: the pipeline description
 * synthesis writes, the synth job's selection files, saved plans and their removals lists. The engine
 * is a recording runner (the real engine runs under gitlab-ci-local in the pipeline store tests).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { describePipeline, PIPELINE_DESCRIPTION_PATH } from '../../../lib/pipeline/pipeline-description';
import { PipelineJobContext } from '../../../lib/pipeline/pipeline-job-context';
import { PipelineJobLog } from '../../../lib/pipeline/pipeline-job-log';
import { ConfigurationPipelineYamlOptions } from '../../../lib/render/configuration-pipeline-yaml';
import { PIPELINE_OPTIONS } from '../../support/pipeline-options';

/** A platform with a mount stack, 6 shards of it in a group of 4 jobs, the pipeline roles' stack (with an input variable) and a stack depending on a shard. */
export const FIXTURE_OPTIONS: ConfigurationPipelineYamlOptions = {
  ...PIPELINE_OPTIONS,
  stacks: ['app-roles', 'app-roles-1', 'app-roles-2', 'app-roles-3', 'app-roles-4', 'app-roles-5', 'app-roles-6', 'ci-access', 'people'],
  dependencies: Object.fromEntries([1, 2, 3, 4, 5, 6].map((n) => [`app-roles-${n}`, ['app-roles']])),
  shardGroups: [{ name: 'app-roles-shards', stacks: ['app-roles-1', 'app-roles-2', 'app-roles-3', 'app-roles-4', 'app-roles-5', 'app-roles-6'], jobs: 4 }],
  inputs: { 'ci-access': [{ name: 'oidc_client_secret', required: true }, { name: 'with_default', required: false }] },
};

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** The default-branch review's verdict that lets the apply jobs apply: the plans give what was approved (docs/pipelines.md §13). */
export const APPROVED_OUTCOME = JSON.stringify({ status: 'equal', commit: 'c'.repeat(40), reason: 'the plans give exactly the change approved by !1', mergeRequests: [1], differences: [], stale: [] });

/** A job directory holding `files` and the fixture's description in cdktf.out (and, unless `files` says otherwise, the verdict {@link APPROVED_OUTCOME}). */
export function jobDirectory(files: Record<string, string>, options: ConfigurationPipelineYamlOptions = FIXTURE_OPTIONS): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pipeline-job-'));
  dirs.push(dir);
  const all = { [path.join('cdktf.out', PIPELINE_DESCRIPTION_PATH)]: JSON.stringify(describePipeline(options)), 'approval-comparison.json': APPROVED_OUTCOME, ...files };
  for (const [name, content] of Object.entries(all)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

/** A job context over `dir` whose engine records each call (arguments and added environment) and answers `codes(args)`. */
export function recordingContext(dir: string, env: NodeJS.ProcessEnv = {}, codes: (args: readonly string[]) => number = () => 0) {
  const lines: string[] = [];
  const calls: { args: string[]; env: Record<string, string> }[] = [];
  const log = new PipelineJobLog('test', (l) => lines.push(l));
  const ctx: PipelineJobContext = {
    dir,
    description: describePipeline(FIXTURE_OPTIONS),
    env,
    log,
    engine: async (args, added) => {
      calls.push({ args: [...args], env: { ...added } });
      return codes(args);
    },
  };
  /** The calls as `tf STACK ...` lines with the job directory written as `$DIR`. */
  const callLines = () => calls.map((c) => c.args.join(' ').split(dir).join('$DIR'));
  return { ctx, lines, calls, callLines };
}
