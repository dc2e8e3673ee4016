import { HEAD_OUTPUT, runSynthStep, SynthStepFailure } from '../pipeline/synth-step';
import { BASE_OUTPUT, CHANGED_STACKS_FILE, CHANGED_STACKS_NOTE, RETIRED_STACKS_FILE, SHARED_SYNTH_DIR, SYNTH_CACHE_DIR } from '../render/configuration-pipeline-yaml';
import { PROTECTED_REF_VARIABLE, SYNTH_CACHE_SECRET_VARIABLE, SYNTH_CACHE_VARIABLE } from '../sources/synthesis-cache';
import { terminalJson } from '../private/terminal-text';
import { changedStacksCommand } from './changed-stacks-command';
import { cliVersion } from './cli-version';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { movesCommand } from './moves-command';
import { refSynthesizer } from './source-argument';

/**
 * `secretstore-iac pipeline synth`: the configuration pipeline's synth job, one command (this
 * commit's synthesis, stored in the synthesis cache; the base from that cache; moves; the stacks to
 * plan and apply; the note). Runs the same on a laptop given the job's CI variables.
 */
export const pipelineSynthCommand: Command = {
  name: 'synth',
  summary: 'the synth job: synthesize this commit once, take the base from the synthesis cache, write the moves and the stacks to plan and apply',
  usage: [
    'Usage: secretstore-iac pipeline synth [--format text|json]',
    '',
    'The configuration pipeline\'s synth job, in the project directory, from its CI variables:',
    '',
    `1. synthesizes this commit once into ${HEAD_OUTPUT} (npm run synth:built when the job's npm run build left dist/`,
    '   compiled from CI_COMMIT_SHA, else npm run synth) and fails when SECRETSTORE_IAC_PIPELINE_COPY is not',
    '   the pipeline file this synthesis wrote;',
    `2. with ${SYNTH_CACHE_VARIABLE}=DIR (the pipeline sets ${SYNTH_CACHE_DIR}), stores that synthesis in the`,
    '   synthesis cache, sealed, keyed by its commit\'s tree and library (not from a checkout with',
    '   uncommitted changes): a later pipeline whose base is this commit takes it from there;',
    '3. the base: a merge request\'s CI_MERGE_REQUEST_DIFF_BASE_SHA (else origin/ its target branch,',
    '   fetched), the default branch\'s CI_COMMIT_BEFORE_SHA; none (forty zeros): every stack is planned;',
    '   a schedule: no selection (the drift jobs check every stack). The base\'s synthesis comes, for a',
    `   merge request, from the copy its target branch\'s pipeline wrote to ${SHARED_SYNTH_DIR} (verified:`,
    '   key, tree, file digests), else from the cache; only when neither has an entry this job can verify',
    `   is the base compiled and synthesized in a worktree (the log says which), into ${BASE_OUTPUT}. The`,
    '   protected default branch\'s job writes that copy of its commit; no protected pipeline reads it;',
    `4. writes the moves since the base (secretstore-iac moves), ${CHANGED_STACKS_FILE} (secretstore-iac`,
    `   changed-stacks: the stacks to plan and apply, in dependency order), ${RETIRED_STACKS_FILE} and the`,
    `   merge request's note ${CHANGED_STACKS_NOTE}. A base that cannot be synthesized or compared: every`,
    '   stack is planned, saying why.',
    '',
    `Entries are sealed; with ${SYNTH_CACHE_SECRET_VARIABLE} set, with an HMAC of that secret, so an entry`,
    `written without it is never read with it. With ${PROTECTED_REF_VARIABLE} set, protected and unprotected`,
    'refs keep separate entries. An entry that does not verify is never read.',
    '',
    'The last line of the log gives the seconds of each step.',
    '',
    '  --format text  the decisions as log lines (default)',
    '  --format json  the same log on standard error; on standard output the selection, the retired',
    '                 stacks, the base, where its synthesis came from, and the seconds of each step',
    '',
    'Exit codes: 0 selected (the files are written), 2 usage error, 3 this commit does not synthesize,',
    'or the committed pipeline file is stale.',
    '',
    'Example (CI, the synth job): "$SECRETSTORE_IAC_BIN" pipeline synth (by hand: npx secretstore-iac pipeline synth)',
  ].join('\n'),
  async run(args, context) {
    const { values } = parseCommandArguments(args, { format: { type: 'string' } }, { min: 0, max: 0, names: 'no argument' });
    const format = formatOption(values.format, ['text', 'json'] as const, 'text');
    const io = format === 'json' ? { ...context, stdout: (line: string) => context.stderr(line) } : context;
    const synthesizer = refSynthesizer(context);
    try {
      const result = await runSynthStep(io, {
        synthesizer,
        libraryVersion: cliVersion(),
        moves: (a, c) => movesCommand.run(a, { ...context, ...c }),
        changedStacks: (a, c) => changedStacksCommand.run(a, { ...context, ...c }),
      });
      if (format === 'json') context.stdout(terminalJson(result));
      return ExitCode.ok;
    } catch (e) {
      if (!(e instanceof SynthStepFailure)) throw e;
      context.stderr(`secretstore-iac: ${e.message}`);
      return ExitCode.runtime;
    } finally {
      synthesizer.dispose();
    }
  },
};
