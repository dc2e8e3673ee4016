import { ACCESS_CHANGE_FILE, APPROVAL_COMPARISON_FILE, BASE_OUTPUT, CHANGED_STACKS_FILE, CHANGED_STACKS_NOTE, CONFIRMATION_FILE, MOVES_NOTE, RETIRED_STACKS_FILE, REVIEWED_PLANS_FILE, NARROWING_FILE, NARROWING_PATCH_FILE, USAGE_FILE, USAGE_MATRIX_FILE } from './configuration-pipeline-yaml';

/**
 * The .gitignore of a configuration repository: what the build, synthesis, engine and local
 * pipeline runs write. `locks/` (the provider lock files) and `.gitlab/` (the pipeline's committed
 * copy) are committed; so is package-lock.json.
 */
export function renderConfigurationGitignore(): string {
  return [
    'node_modules/',
    'dist/',
    '# Synthesis output: written again by every `npm run synth`. The provider lock files are committed',
    '# in locks/<stack>/ (secretstore-iac tf STACK -- init keeps them there).',
    'cdktf.out/',
    'cdktf.out.*/',
    '.terraform/',
    '*.tfstate',
    '*.tfstate.backup',
    '# Saved plans, plugin caches and gitlab-ci-local runs of the pipeline.',
    'secretstore-iac-plans/',
    '.secretstore-iac-plugin-cache/',
    '.gitlab-ci-local/',
    '# gitlab-ci-local\'s local variables (tokens: never committed) and what the jobs\' artifacts leave behind.',
    '.gitlab-ci-local-variables.yml',
    '.gitlab-ci-local-env',
    `${BASE_OUTPUT}/`,
    '.secretstore-iac/',
    CHANGED_STACKS_FILE,
    CHANGED_STACKS_NOTE,
    RETIRED_STACKS_FILE,
    REVIEWED_PLANS_FILE,
    MOVES_NOTE,
    // The review job's note and risk-flag count (lib/pipeline/pipeline-review-job.ts).
    'access-diff.md',
    'access-risk-flags.txt',
    // The approval of record (docs/pipelines.md §13): the review's access change, the comparison, the confirmation.
    ACCESS_CHANGE_FILE,
    APPROVAL_COMPARISON_FILE,
    CONFIRMATION_FILE,
    // The usage job's file and picture, its narrowing, the audit log it downloads, the review's copy (docs/usage.md §9).
    USAGE_FILE,
    USAGE_MATRIX_FILE,
    NARROWING_PATCH_FILE,
    NARROWING_FILE,
    'secretstore-iac-audit-log/',
    'usage-of-default-branch.json',
    '',
  ].join('\n');
}
