import { PlatformConfig } from '../../lib/platform/platform-config';
import { platformConfig as shipped } from '../../stacks/platform.config';

/** The opt-out of tests that synthesize a configuration pipeline with local state: nothing of theirs is applied by a pipeline. */
export const TEST_LOCAL_STATE_REASON = 'tests: synthesized or applied by one process, never by a pipeline';

/**
 * The shipped configuration (stacks/platform.config.ts) as the unit tests synthesize it: with the
 * default local state (stacks/main.ts gives it PostgreSQL), so with the pipeline's opt-out.
 */
export const platformConfig: PlatformConfig = withTestLocalState(shipped);

/** `config` with the tests' local-state opt-out on its configuration pipeline (a config without one is returned as is). */
export function withTestLocalState(config: PlatformConfig): PlatformConfig {
  return config.configurationProject === undefined ? config : { ...config, configurationProject: { ...config.configurationProject, localStateReason: TEST_LOCAL_STATE_REASON } };
}
