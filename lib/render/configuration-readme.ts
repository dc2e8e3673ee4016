import { commentText } from './text-encoders';
import { mdCode } from './markdown-text';
import { CONFIGURATION_PIPELINE_COPY } from './configuration-gitlab-ci';

/** What {@link renderConfigurationReadme} says about the repository. */
export interface ConfigurationReadmeOptions {
  /** The repository's package name (the title). */
  readonly name: string;
  /** The `secretstore-iac` version range the repository depends on. */
  readonly packageSpec: string;
  /** Whether the dependency is a local tarball (`file:`), which a runner cannot install. */
  readonly localTarball?: boolean;
}

/**
 * The README.md of a configuration repository: the files, the two commands (synthesize; plan and
 * apply), where the provider lock files live and how an upgrade of the library is reviewed.
 */
export function renderConfigurationReadme(options: ConfigurationReadmeOptions): string {
  return [
    `# ${commentText(options.name)}`,
    '',
    'The secrets store configuration of this organisation: roles and policies of HashiCorp Vault or',
    `OpenBao, declared with [secretstore-iac](https://www.npmjs.com/package/secretstore-iac) (${mdCode(options.packageSpec)}).`,
    '',
    ...(options.localTarball
      ? [
          `**Local tarball**: ${mdCode(options.packageSpec)} is for trying things on this machine only; a runner`,
          'cannot install it. Before the pipeline runs, depend on a version from your registry, a git URL with',
          'a tag or a tarball URL (`npm install secretstore-iac@npm:@acme/secretstore-iac@^0.2.0`, for example).',
          '',
        ]
      : []),
    '| file | what it is |',
    '|---|---|',
    '| `stacks/platform.config.ts` | the configuration: replace the example values with your installation\'s |',
    '| `stacks/main.ts` | the app entry: synthesizes the platform\'s stacks into `cdktf.out/` |',
    `| \`.gitlab-ci.yml\` | includes the generated pipeline, committed as \`${commentText(CONFIGURATION_PIPELINE_COPY)}\` |`,
    '| `locks/<stack>/.terraform.lock.hcl` | the provider lock files: committed |',
    '',
    '## Synthesize',
    '',
    '```sh',
    'npm install                     # once; commit package-lock.json (the pipeline runs npm ci)',
    'npm run synth                   # compile, check every value and rule, write cdktf.out/',
    '# the pipeline, after a change of stacks or pipeline settings (its synth job fails on a stale copy); commit it',
    `mkdir -p ${commentText(CONFIGURATION_PIPELINE_COPY.replace(/\/[^/]*$/, ''))} && cp cdktf.out/ci/secretstore-iac.gitlab-ci.yml ${commentText(CONFIGURATION_PIPELINE_COPY)}`,
    '```',
    '',
    '## Plan and apply',
    '',
    'With the store\'s address in `SECRETSTORE_ADDR` and a token allowed to write its auth methods and',
    'policies in `VAULT_TOKEN` (the first apply; afterwards the generated pipeline applies), and the',
    'connection to the state\'s PostgreSQL database in `PG_CONN_STR` (`stacks/main.ts` keeps every',
    'stack\'s state there, shared with the pipeline, which needs the same masked CI/CD variable; it is',
    'never written to a file; a pipeline on local state is refused at synthesis):',
    '',
    '```sh',
    'npx secretstore-iac tf ci-access -- init && npx secretstore-iac tf ci-access -- apply',
    'npx secretstore-iac tf app-roles -- init && npx secretstore-iac tf app-roles -- apply',
    '```',
    '',
    '## Run the pipeline locally',
    '',
    '`npm run pipeline:local` runs the generated pipeline with gitlab-ci-local (the pinned version, fetched by',
    '`npx` on first use: no dependency of this repository, so the jobs\' `npm ci` never installs it), each job in',
    'its own copy under `.gitlab-ci-local/`. Its variables (`SECRETSTORE_ADDR`, `SECRETSTORE_ID_TOKEN`, ...)',
    'go in `.gitlab-ci-local-variables.yml` (ignored by git: never commit it) or `-- --variable K=V`.',
    '',
    '## Lock files',
    '',
    '`npx secretstore-iac tf STACK -- init` keeps each stack\'s provider lock file in',
    '`locks/STACK/.terraform.lock.hcl`: copied into `cdktf.out/stacks/STACK/` before the engine runs,',
    'copied back when `init` changed it; a stack without one (people, a shard) gets one derived from',
    'it. Commit them: every machine and pipeline then installs the same provider builds.',
    '',
    '## Upgrading secretstore-iac',
    '',
    'An upgrade is an access change like any other: synthesize before it and keep the output',
    '(`cp -r cdktf.out cdktf.out.before`), upgrade (`npm install secretstore-iac@VERSION`), synthesize',
    'again and review `npx secretstore-iac access-diff cdktf.out.before cdktf.out`; the merge request\'s',
    'access-diff job shows the same. See the package\'s CHANGELOG.md.',
    '',
  ].join('\n');
}
