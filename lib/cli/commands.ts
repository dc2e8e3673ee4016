import { accessCommand } from './access-command';
import { accessDiffCommand } from './access-diff-command';
import { adoptCommand } from './adopt-command';
import { changedStacksCommand } from './changed-stacks-command';
import { checkAppRoleCommand } from './check-approle-command';
import { Command } from './command';
import { driftCommand } from './drift-command';
import { engineCommand } from './engine-command';
import { initCommand } from './init-command';
import { invariantsCommand } from './invariants-command';
import { movesCommand } from './moves-command';
import { narrowCommand } from './narrow-command';
import { pipelineCommand } from './pipeline-command';
import { provisionCommand } from './provision-command';
import { rotateSecretIdCommand } from './rotate-secret-id-command';
import { synthRefCommand } from './synth-ref-command';
import { usageCommand } from './usage-command';
import { whoCanCommand } from './who-can-command';

/**
 * The commands of the `secretstore-iac` CLI, in the order `--help` lists them. A new command is
 * one file implementing {@link Command} and one line here.
 */
export const COMMANDS: readonly Command[] = [
  initCommand,
  accessCommand,
  accessDiffCommand,
  changedStacksCommand,
  synthRefCommand,
  whoCanCommand,
  invariantsCommand,
  usageCommand,
  narrowCommand,
  provisionCommand,
  rotateSecretIdCommand,
  checkAppRoleCommand,
  engineCommand,
  driftCommand,
  adoptCommand,
  movesCommand,
  pipelineCommand,
];
