import { renderConfigurationCdktfJson } from './configuration-cdktf-json';
import { renderConfigurationGitignore } from './configuration-gitignore';
import { renderConfigurationGitlabCi } from './configuration-gitlab-ci';
import { configurationPackageName, renderConfigurationPackageJson } from './configuration-package-json';
import { renderConfigurationReadme } from './configuration-readme';
import { librarySpecKind } from './library-spec';
import { renderConfigurationTsconfig } from './configuration-tsconfig';

/** What {@link renderConfigurationRepository} needs. */
export interface ConfigurationRepositoryOptions {
  /** Name of the repository's directory: its package name is made from it. */
  readonly directoryName: string;
  /** The dependency on `secretstore-iac` (a registry version range, a git URL with a tag, a tarball URL or a local tarball). */
  readonly packageSpec: string;
  /** Exact TypeScript version of the repository's devDependencies. */
  readonly typescriptVersion: string;
  /** Exact `@types/node` version of the repository's devDependencies. */
  readonly typesNodeVersion: string;
  /** Exact `gitlab-ci-local` version `npm run pipeline:local` runs (by `npx`: no dependency of the repository). */
  readonly gitlabCiLocalVersion: string;
  /**
   * The configuration and app entry, by path relative to the repository (`stacks/main.ts`,
   * `stacks/platform.config.ts`): the package's own `stacks/` files, so that a new repository starts
   * from exactly the configuration this package synthesizes and tests.
   */
  readonly stackFiles: Readonly<Record<string, string>>;
}

/** One file of a new configuration repository. */
export interface ConfigurationRepositoryFile {
  /** Path relative to the repository, `/`-separated. */
  readonly path: string;
  /** The file's text. */
  readonly content: string;
}

/**
 * Every file `secretstore-iac init` writes into a new configuration repository, in path order:
 * package.json, tsconfig.json, cdktf.json, .gitignore, .gitlab-ci.yml (the pipeline include),
 * README.md and the `stacks/` files.
 */
export function renderConfigurationRepository(options: ConfigurationRepositoryOptions): ConfigurationRepositoryFile[] {
  const name = configurationPackageName(options.directoryName);
  const files: ConfigurationRepositoryFile[] = [
    {
      path: 'package.json',
      content: renderConfigurationPackageJson({
        name,
        packageSpec: options.packageSpec,
        typescriptVersion: options.typescriptVersion,
        typesNodeVersion: options.typesNodeVersion,
        gitlabCiLocalVersion: options.gitlabCiLocalVersion,
      }),
    },
    { path: 'tsconfig.json', content: renderConfigurationTsconfig() },
    { path: 'cdktf.json', content: renderConfigurationCdktfJson(name) },
    { path: '.gitignore', content: renderConfigurationGitignore() },
    { path: '.gitlab-ci.yml', content: renderConfigurationGitlabCi() },
    { path: 'README.md', content: renderConfigurationReadme({ name, packageSpec: options.packageSpec, localTarball: librarySpecKind(options.packageSpec) === 'local-tarball' }) },
    ...Object.entries(options.stackFiles).map(([path, content]) => ({ path, content })),
  ];
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
