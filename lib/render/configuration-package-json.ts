import { jsonDocument } from './text-encoders';

/** What {@link renderConfigurationPackageJson} writes into a configuration repository's package.json. */
export interface ConfigurationPackageJsonOptions {
  /** The repository's npm package name (see {@link configurationPackageName}). */
  readonly name: string;
  /** The dependency on `secretstore-iac`: a registry version range, a git URL with a tag, a tarball URL or a local tarball. */
  readonly packageSpec: string;
  /** Exact TypeScript version that compiles the configuration (below 7: the constructs are compiled by tsc 5). */
  readonly typescriptVersion: string;
  /** Exact `@types/node` version (the configuration's entry uses `path` and `process`). */
  readonly typesNodeVersion: string;
  /**
   * Exact `gitlab-ci-local` version: {@link PIPELINE_LOCAL_SCRIPT} runs the pipeline with it, fetched by
   * `npx` on first use (not a devDependency: every job's `npm ci` would install it for nothing).
   */
  readonly gitlabCiLocalVersion: string;
}

/**
 * An npm package name from a directory name: lower case; characters npm refuses as `-`;
 * `secretstore-config` when nothing usable is left.
 */
export function configurationPackageName(directoryName: string): string {
  const name = directoryName
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '')
    .replace(/-+$/, '')
    .slice(0, 214);
  return name === '' ? 'secretstore-config' : name;
}

/**
 * The script of a configuration repository that synthesizes the configuration as `build` compiled it
 * (`dist/`), without compiling: the generated pipeline's synth job runs it after its `npm run build`,
 * so the configuration is compiled once per pipeline. `synth` is `build`, then this.
 */
export const SYNTH_BUILT_SCRIPT = 'synth:built';

/**
 * The script of a configuration repository that runs its generated pipeline on this machine with
 * gitlab-ci-local (each job in its own copy of the repository; the pipeline file checked against
 * GitLab's schema). Its variables come from `--variable K=V` or `.gitlab-ci-local-variables.yml`.
 */
export const PIPELINE_LOCAL_SCRIPT = 'pipeline:local';

/**
 * The command of {@link PIPELINE_LOCAL_SCRIPT}: gitlab-ci-local at exactly `version`, run by `npx`
 * (fetched into the npm cache on first use), so that it is no dependency of the repository: the
 * pipeline's jobs install the dependencies with `npm ci`, and a tool only a workstation runs would be
 * downloaded by every job of every pipeline.
 */
export function pipelineLocalCommand(version: string): string {
  return `npx --yes --package=gitlab-ci-local@${version} -- gitlab-ci-local --shell-isolation --json-schema-validation`;
}

/**
 * The package.json of a configuration repository: private (it is never published), depending on
 * `secretstore-iac`, with the scripts the generated pipeline runs (`build` compiles the
 * configuration, {@link SYNTH_BUILT_SCRIPT} writes `cdktf.out/` from the compiled configuration,
 * `synth` does both, {@link PIPELINE_LOCAL_SCRIPT} runs the pipeline locally with a pinned
 * gitlab-ci-local, which is no dependency).
 */
export function renderConfigurationPackageJson(options: ConfigurationPackageJsonOptions): string {
  const manifest = {
    name: options.name,
    version: '0.0.0',
    private: true,
    description: 'The secrets store configuration: roles and policies synthesized by secretstore-iac',
    scripts: {
      build: 'tsc -p tsconfig.json',
      synth: `npm run build && npm run ${SYNTH_BUILT_SCRIPT}`,
      [SYNTH_BUILT_SCRIPT]: 'node dist/stacks/main.js',
      [PIPELINE_LOCAL_SCRIPT]: pipelineLocalCommand(options.gitlabCiLocalVersion),
    },
    dependencies: { 'secretstore-iac': options.packageSpec },
    // What the pipeline's synth job compiles the configuration with: nothing else, since every job installs them.
    devDependencies: {
      '@types/node': options.typesNodeVersion,
      typescript: options.typescriptVersion,
    },
  };
  return jsonDocument(manifest);
}
