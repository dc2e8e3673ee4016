/**
 * Where a configuration repository keeps its `PlatformConfig` object, relative to the repository:
 * what `narrow` edits by default and what the pipeline's usage job narrows. Kept apart from
 * platform-config-edit.ts, which loads the TypeScript compiler only when an edit is made.
 */
export const PLATFORM_CONFIG_SOURCE = 'stacks/platform.config.ts';
