import { Command } from './command';
import { pipelineSynthCommand } from './pipeline-synth-command';
import { UsageError } from './usage-error';

/** The subcommands of `secretstore-iac pipeline`, one per job of the configuration pipeline. */
export const PIPELINE_SUBCOMMANDS: readonly Command[] = [pipelineSynthCommand];

/**
 * `secretstore-iac pipeline JOB`: the configuration pipeline's jobs, each one tested command that
 * runs the same in the job as on a laptop given the job's CI variables and artifacts.
 */
export const pipelineCommand: Command = {
  name: 'pipeline',
  summary: 'the configuration pipeline\'s jobs, one subcommand each (secretstore-iac pipeline --help)',
  usage: [
    'Usage: secretstore-iac pipeline JOB [ARGS...]',
    '       secretstore-iac pipeline JOB --help',
    '',
    'The jobs of the configuration pipeline (docs/pipelines.md), each run by its job as one command:',
    ...PIPELINE_SUBCOMMANDS.map((c) => `  ${c.name}  ${c.summary}`),
  ].join('\n'),
  usageFor(args) {
    return PIPELINE_SUBCOMMANDS.find((c) => c.name === args[0])?.usage ?? this.usage;
  },
  async run(args, context) {
    const [name, ...rest] = args;
    const sub = PIPELINE_SUBCOMMANDS.find((c) => c.name === name);
    if (sub === undefined) throw new UsageError(`${name === undefined ? 'no job given' : `unknown job ${JSON.stringify(name)}`}: one of ${PIPELINE_SUBCOMMANDS.map((c) => c.name).join(', ')}`);
    return sub.run(rest, context);
  },
};
