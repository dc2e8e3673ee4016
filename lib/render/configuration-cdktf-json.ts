import { jsonDocument } from './text-encoders';

/**
 * The cdktf.json of a configuration repository. Its `app` is the command that synthesizes the
 * stacks: `cdktf synth` runs it, and so does `secretstore-iac access-diff` (and `changed-stacks`) for
 * a git ref, in a temporary worktree of that commit. Its directory is also where `secretstore-iac tf`
 * keeps the committed provider lock files (`locks/<stack>/`).
 *
 * @param projectId cdktf's project id (the repository's package name)
 */
export function renderConfigurationCdktfJson(projectId: string): string {
  return jsonDocument({
    language: 'typescript',
    app: 'npx tsc -p tsconfig.json && node dist/stacks/main.js',
    projectId,
    sendCrashReports: 'false',
    terraformProviders: [],
    terraformModules: [],
    context: {},
  });
}
