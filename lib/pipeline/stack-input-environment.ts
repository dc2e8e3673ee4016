import { INPUT_PLACEHOLDER, inputVariableCiName, PipelineInputVariable } from '../render/configuration-pipeline-yaml';

/** What a job gives the engine for the input variables of the stacks it plans or applies. */
export interface StackInputEnvironment {
  /** Variables to add to the engine's environment: only placeholders (a set CI/CD variable passes on as it is). */
  readonly env: Readonly<Record<string, string>>;
  /** One line per decision (a placeholder used); never a value. */
  readonly decisions: readonly string[];
  /** One line per required variable that is not set where it must be (a protected branch's job). */
  readonly problems: readonly string[];
}

/**
 * The input variables of `stacks` as a job passes them to the engine: each required one from the
 * CI/CD variable `TF_VAR_<name>` (the engine's own name, so the value passes through the
 * environment, never a command line). A merge-request plan (`mergeRequest`) without it plans with
 * {@link INPUT_PLACEHOLDER} (the variables are ephemeral: the plan records no value); any other job
 * without it is a problem naming the variable and the stack. Only whether a variable is set is
 * looked at: its value is never read into a message.
 */
export function stackInputEnvironment(
  stacks: readonly string[],
  inputs: Readonly<Record<string, readonly PipelineInputVariable[]>>,
  env: NodeJS.ProcessEnv,
  mergeRequest: boolean,
): StackInputEnvironment {
  const added: Record<string, string> = {};
  const decisions: string[] = [];
  const problems: string[] = [];
  for (const stack of stacks) {
    for (const v of (inputs[stack] ?? []).filter((i) => i.required)) {
      const ci = inputVariableCiName(v.name);
      if ((env[ci] ?? '') !== '' || added[ci] !== undefined) continue;
      if (mergeRequest) {
        added[ci] = INPUT_PLACEHOLDER;
        decisions.push(`${ci} is not set (merge-request pipelines get no protected variable): ${v.name} of stack ${stack} is planned with a placeholder; it is ephemeral, so the plan records no value of it`);
      } else {
        problems.push(`stack ${stack} declares the input variable ${v.name}: set the CI/CD variable ${ci} (masked, protected; docs/pipelines.md)`);
      }
    }
  }
  return { env: added, decisions, problems };
}
