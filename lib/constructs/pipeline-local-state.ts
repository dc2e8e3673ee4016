import { FinalStackDocument } from './final-stack-document';
import { freeTextProblems, visibleLength, VISIBLE_TEXT_NOTE } from '../model/free-text';
import { ValidationProblem } from '../model/validation-problem';
import { SecretStoreStack } from './secret-store-stack';

/** Fewest visible characters of {@link ConfigurationPipelineProps.localStateReason}: a reason, not a placeholder. */
export const MIN_LOCAL_STATE_REASON = 10;

/**
 * True when a stack keeps its Terraform state in a local file, read from its final document
 * ({@link FinalStackDocument.backendTypes}: what the engine loads, after every override and
 * whatever backend class wrote it): a `local` backend (the default of a {@link SecretStoreStack}),
 * or none (the engine then keeps a local state file).
 */
export function keepsLocalState(stack: SecretStoreStack): boolean {
  const types = FinalStackDocument.of(stack).backendTypes;
  return types.length === 0 || types.includes('local');
}

/**
 * The problems of a configuration pipeline's state: a pipeline runs every plan and apply on a runner
 * whose files are gone after the job, so a stack with local state would be planned as new by the
 * next pipeline (every object "to add", then refused by the store as existing). Every stack must
 * have a shared backend, unless `localStateReason` says why this runner keeps the state files (a
 * shell runner with a persistent disk); the reason itself must be one line of at least
 * {@link MIN_LOCAL_STATE_REASON} visible characters.
 * @param stacks the stacks the pipeline plans and applies
 * @param localStateReason the opt-out, as given
 */
export function pipelineLocalStateProblems(stacks: readonly SecretStoreStack[], localStateReason: string | undefined): ValidationProblem[] {
  if (localStateReason !== undefined) {
    const textProblems = freeTextProblems('localStateReason', localStateReason);
    if (textProblems.length > 0) return textProblems;
    if (visibleLength(localStateReason) < MIN_LOCAL_STATE_REASON) {
      return [
        new ValidationProblem(
          'localStateReason',
          localStateReason,
          `must say why the pipeline's runner keeps the state files between jobs (at least ${MIN_LOCAL_STATE_REASON} characters; ${VISIBLE_TEXT_NOTE})`,
        ),
      ];
    }
    return [];
  }
  const local = stacks.filter(keepsLocalState);
  if (local.length === 0) return [];
  // Said when the final document's backend is not what the stack's factory declared: an override or a backend class wrote it.
  const written = local.map((s) => FinalStackDocument.of(s)).filter((d) => !/^written by \S+ \(LocalBackend\)$/.test(d.backendSource));
  const how = written.length === 0 ? '' : ` (the engine loads a local backend: ${written.map((d) => `${d.stack.node.id}: ${d.backendSource}`).join('; ')})`;
  return [
    new ValidationProblem(
      'stateBackend',
      local.map((s) => s.node.id),
      `must be a shared state backend for every stack the pipeline runs (these keep a local state file${how}): a runner's files are gone after its job, ` +
        'so the next pipeline would plan every object as new; pass postgresState() as the third argument of definePlatform (or each stack\'s stateBackend), ' +
        'the engine reading the connection from PG_CONN_STR (a masked CI/CD variable) at plan and apply time, or another shared backend; ' +
        'if this runner keeps its files between jobs (a shell runner with a persistent disk), say so in configurationProject.localStateReason',
    ),
  ];
}
