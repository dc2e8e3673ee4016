/**
 * The one harness of the gitlab-ci-local scenarios of the configuration pipeline
 * (test/store/configuration-pipeline*.store.test.ts, pipeline-removals.store.test.ts): a real store,
 * a PostgreSQL state and, when asked, a real OpenID provider, started side by side; a configuration
 * repository made from this project's library, bin and stacks with the scenario's
 * stacks/platform.config.ts, its pipeline file committed and included, pushed to a bare `origin`; the
 * administrator's bootstrap of the stacks the pipeline roles need; then pipelines of each kind as
 * GitLab runs them (merge request, default branch, manual job, schedule), with the job token, the
 * variables and the protected variables each kind gets, and what their jobs left (log per job,
 * artifacts).
 *
 * What GitLab gives and gitlab-ci-local does not, the harness gives: the ID token (signed with the key
 * the store's JWT method trusts), `CI_COMMIT_BEFORE_SHA`, `CI_MERGE_REQUEST_DIFF_BASE_SHA` (the
 * merge base with `origin/main`), `CI_COMMIT_REF_PROTECTED` (true on the default branch only) and the
 * protected CI/CD variables, which reach default-branch pipelines only (the synthesis cache's secret,
 * and whatever the scenario adds).
 */
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BIN_VARIABLE, OIDC_CLI_REDIRECT_URI } from '../../../lib';
import { APPLY_UNBOUND_VARIABLE, DEFAULT_NOTE_TOKEN_VARIABLE } from '../../../lib/render/configuration-pipeline-yaml';
import { REPO_ROOT } from '../paths';
import { bootstrapStacks, CollectedRun, commitWithOrigin, copyLibraryInto, copyPipelineFile, git, GLCI, glciVariables, jobLines, pipelineJobToken, removeBuild, runCollected, synthesizeRepository } from './configuration-pipeline-harness';
import { generateSigningKey, JwtSigningKey } from './jwt-signer';
import { RunningOidcProvider, startOidcProvider } from './oidc-provider';
import { RunningPostgres, startPostgres } from './postgres-server';
import { startAuditedStore } from './audit-device';
import { RunningStore, startStore } from './store-server';
import { toolchain } from './toolchain-env';

/** The running parts a scenario's configuration names (its key, the store's address, the provider's issuer). */
export interface ScenarioParts {
  readonly key: JwtSigningKey;
  readonly store: RunningStore;
  readonly provider?: RunningOidcProvider;
}

/** What a scenario is made of. */
export interface PipelineScenarioOptions {
  /** The temporary directory's prefix. */
  readonly name: string;
  /** The first stacks/platform.config.ts. */
  readonly config: (parts: ScenarioParts) => string;
  /** A real OpenID provider on 127.0.0.1 (the `people` section's), with these accounts (login → groups). */
  readonly oidc?: { readonly clientId: string; readonly clientSecret: string; readonly accounts: Readonly<Record<string, readonly string[]>> };
  /** The stacks the administrator applies first with a privileged token (the pipeline roles exist only afterwards). */
  readonly bootstrap: readonly string[];
  /** Variables of every job (beside the store's address, the state, the engine, the install). */
  readonly variables?: Readonly<Record<string, string>>;
  /** Protected CI/CD variables: default-branch pipelines and the bootstrap get them, merge requests do not. */
  readonly protectedVariables?: Readonly<Record<string, string>>;
  /** A file audit device on the store, writing to {@link PipelineScenario.auditLog} (docs/usage.md §1). */
  readonly audited?: boolean;
}

/** A finished pipeline (or some of its jobs): exit code, the whole log, and one job's lines. */
export interface PipelineRun extends CollectedRun {
  /** What `job` printed, in order, without the log's prefix. */
  job(job: string): string[];
}

/** This project's bin, as its package.json declares it (`dist/bin/secretstore-iac.js`). */
const OWN_BIN: string = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).bin['secretstore-iac'];

/** The configuration pipeline's note token variable (the default of `noteTokenVariable`). */

/** The default branch and the merge requests' target. */
const MAIN = 'main';

/** One scenario: its store, state, provider, repository, and the pipelines run in it. */
export class PipelineScenario {
  /** The protected variables, the synthesis cache's secret included (docs/pipelines.md §7). */
  readonly protectedVariables: Readonly<Record<string, string>>;
  /** The store's file audit log, when `audited`. */
  auditLog: string | undefined;

  private constructor(
    readonly store: RunningStore,
    readonly pg: RunningPostgres,
    readonly key: JwtSigningKey,
    readonly provider: RunningOidcProvider | undefined,
    readonly root: string,
    readonly repo: string,
    private readonly options: PipelineScenarioOptions,
  ) {
    // Protected variables as docs/pipelines.md says to set them: the synthesis cache's key and the
    // review's (reviewed-plans.json sealed by the review job, its seal checked by every apply).
    this.protectedVariables = { SECRETSTORE_IAC_SYNTH_CACHE_SECRET: randomBytes(16).toString('hex'), SECRETSTORE_IAC_REVIEW_SECRET: randomBytes(16).toString('hex'), ...options.protectedVariables };
  }

  /** Starts the parts, writes, commits and pushes the repository, and bootstraps. */
  static async start(options: PipelineScenarioOptions): Promise<PipelineScenario> {
    const auditLog = path.join(os.tmpdir(), `${options.name}-audit-${randomBytes(6).toString('hex')}.log`);
    const [store, pg, provider] = await Promise.all([
      options.audited === true ? startAuditedStore(auditLog) : startStore(),
      startPostgres(),
      options.oidc === undefined ? Promise.resolve(undefined) : startOidcProvider({ ...options.oidc, redirectUris: [OIDC_CLI_REDIRECT_URI] }),
    ]);
    const root = fs.mkdtempSync(path.join(os.tmpdir(), `${options.name}-`));
    const scenario = new PipelineScenario(store, pg, generateSigningKey(), provider, root, path.join(root, 'config'), options);
    if (options.audited === true) scenario.auditLog = auditLog;
    try {
      await scenario.setUp();
    } catch (e) {
      await scenario.stop();
      throw e;
    }
    return scenario;
  }

  private async setUp(): Promise<void> {
    const repo = this.repo;
    copyLibraryInto(repo, ['node_modules', 'dist', 'cdktf.out', '.gitlab-ci-local', 'secretstore-iac-plans', '.secretstore-iac']);
    this.writeConfig(this.options.config(this));
    // The state in PostgreSQL, as the shipped stacks/main.ts declares it (postgresState()).
    if (!this.read('stacks/main.ts').includes('definePlatform(a, platformConfig, postgresState())')) throw new Error('stacks/main.ts no longer declares the state with postgresState()');
    synthesizeRepository(repo);
    copyPipelineFile(repo);
    fs.writeFileSync(path.join(repo, '.gitlab-ci.yml'), 'include:\n  - local: .gitlab/secretstore-iac.gitlab-ci.yml\n');
    commitWithOrigin(this.root, repo, 'platform configuration');
    const tools = toolchain();
    await bootstrapStacks(repo, this.options.bootstrap, {
      SECRETSTORE_ADDR: this.store.addr,
      VAULT_TOKEN: this.store.rootToken,
      PG_CONN_STR: this.pg.connStr,
      SECRETSTORE_IAC_TOFU: tools.tofu,
      TF_CLI_CONFIG_FILE: tools.cliConfig,
      // Where the tool finds its provider mirror (an engine run writes its own CLI configuration, issue 45).
      SECRETSTORE_IAC_CACHE: tools.cacheDir,
      TF_PLUGIN_CACHE_DIR: tools.pluginCacheDir,
      TF_IN_AUTOMATION: '1',
      ...this.options.protectedVariables,
    });
    removeBuild(repo);
  }

  /** Stops what it started and removes the repository. */
  async stop(): Promise<void> {
    await this.provider?.stop();
    await this.store.stop();
    if (this.auditLog !== undefined) fs.rmSync(this.auditLog, { force: true });
    await this.pg.stop();
    fs.rmSync(this.root, { recursive: true, force: true });
  }

  /** A file of the repository (`rel` from its root). */
  read(rel: string): string {
    return fs.readFileSync(path.join(this.repo, rel), 'utf8');
  }

  /** Writes a file of the repository. */
  write(rel: string, text: string): void {
    fs.writeFileSync(path.join(this.repo, rel), text);
  }

  /** Writes stacks/platform.config.ts. */
  writeConfig(text: string): void {
    this.write('stacks/platform.config.ts', text);
  }

  /** Synthesizes the repository as it is and copies the pipeline file it writes to the committed copy (new stacks are new jobs). */
  refreshPipelineCopy(): void {
    synthesizeRepository(this.repo);
    copyPipelineFile(this.repo);
    removeBuild(this.repo);
  }

  /** git in the repository; its trimmed output. */
  git(...args: string[]): string {
    return git(this.repo, ...args);
  }

  /** Commits every change on a new branch `branch` (a merge request's), and goes back to the default branch. */
  commitOnBranch(branch: string, message: string): void {
    this.git('checkout', '-q', '-b', branch);
    try {
      this.git('commit', '-q', '-am', message);
    } finally {
      this.git('checkout', '-q', MAIN);
    }
  }

  /** Merges `branch` into the default branch (fast-forward) and pushes it: the commit before, for the push's pipeline. */
  merge(branch: string): string {
    const before = this.git('rev-parse', MAIN);
    this.git('merge', '-q', '--ff-only', branch);
    this.git('push', '-q', 'origin', MAIN);
    return before;
  }

  /** Commits every change on the default branch and pushes it: the commit before, for the push's pipeline. */
  commitToMain(message: string): string {
    const before = this.git('rev-parse', MAIN);
    this.git('commit', '-q', '-am', message);
    this.git('push', '-q', 'origin', MAIN);
    return before;
  }

  /**
   * A merge request's pipeline of `branch` (checked out while it runs), or of its `jobs` and what they
   * need (`--needs`; `only` runs just those jobs, with the artifacts the last run left): an unprotected
   * ref's token and variables, no protected variable, its diff base the merge base with `origin/main`.
   */
  async mergeRequest(branch: string, iid: number, options: { jobs?: readonly string[]; only?: boolean; variables?: Readonly<Record<string, string>> } = {}): Promise<PipelineRun> {
    this.git('checkout', '-q', branch);
    try {
      const variables = {
        CI_PIPELINE_SOURCE: 'merge_request_event',
        CI_MERGE_REQUEST_TARGET_BRANCH_NAME: MAIN,
        CI_MERGE_REQUEST_IID: String(iid),
        CI_MERGE_REQUEST_DIFF_BASE_SHA: this.git('merge-base', `origin/${MAIN}`, 'HEAD'),
        CI_COMMIT_REF_PROTECTED: 'false',
        ...options.variables,
      };
      return await this.run(this.repo, jobArguments(options), { ref: branch, ref_protected: 'false', ref_path: `refs/heads/${branch}` }, variables);
    } finally {
      this.git('checkout', '-q', MAIN);
    }
  }

  /**
   * A default-branch pipeline of a push onto `before` (none: started by hand, every stack planned),
   * or some of its jobs: a protected ref's token, `CI_COMMIT_REF_PROTECTED=true` and the protected
   * variables. `cwd`: another clone of `origin`.
   */
  defaultBranch(before: string | undefined, options: { jobs?: readonly string[]; only?: boolean; manual?: string; cwd?: string; variables?: Readonly<Record<string, string>> } = {}): Promise<PipelineRun> {
    const variables = {
      CI_COMMIT_REF_PROTECTED: 'true',
      // A scenario without a GitLab API (no note token) reads no approval: the default branch fails
      // closed (docs/pipelines.md §13), so it opts out, as documented, to apply as these scenarios test;
      // one with the stand-in (the note token among its variables) is bound.
      ...(this.options.variables?.[DEFAULT_NOTE_TOKEN_VARIABLE] ? {} : { [APPLY_UNBOUND_VARIABLE]: 'true' }),
      ...(before === undefined ? {} : { CI_COMMIT_BEFORE_SHA: before }),
      ...this.protectedVariables,
      ...options.variables,
    };
    const manual = options.manual === undefined ? [] : ['--manual', options.manual];
    return this.run(options.cwd ?? this.repo, [...jobArguments(options), ...manual], { ref: MAIN, ref_protected: 'true' }, variables);
  }

  /** A scheduled pipeline's `job` (and what it needs) on the default branch. */
  schedule(job: string): Promise<PipelineRun> {
    return this.defaultBranch(undefined, { jobs: [job], variables: { CI_PIPELINE_SOURCE: 'schedule' } });
  }

  /** `gitlab-ci-local --list` of a merge request (`branch`) or the default branch (undefined). */
  async list(branch?: string): Promise<string> {
    if (branch === undefined) return (await this.defaultBranch(undefined, { jobs: ['--list'], only: true })).output;
    return (await this.mergeRequest(branch, 1, { jobs: ['--list'], only: true })).output;
  }

  /** A file a job left as its artifact. */
  artifact(job: string, ...file: string[]): string {
    return path.join(this.repo, '.gitlab-ci-local', 'artifacts', job, ...file);
  }

  /** Runs gitlab-ci-local in `cwd` with the job token of `claims` and the variables; no store token reaches the jobs. */
  private async run(cwd: string, args: readonly string[], claims: Record<string, unknown>, variables: Readonly<Record<string, string>>): Promise<PipelineRun> {
    const tools = toolchain();
    const all = {
      SECRETSTORE_ADDR: this.store.addr,
      PG_CONN_STR: this.pg.connStr,
      SECRETSTORE_ID_TOKEN: pipelineJobToken(this.key, claims),
      SECRETSTORE_IAC_INSTALL: `ln -sfn ${REPO_ROOT}/node_modules node_modules`,
      // The library is this repository itself, not a package in node_modules: its jobs run the bin
      // package.json names (dist/, which the synth job compiles), as a CI/CD variable overrides it.
      [BIN_VARIABLE]: OWN_BIN,
      SECRETSTORE_IAC_TOFU: tools.tofu,
      // No TF_PLUGIN_CACHE_DIR: the plan jobs run at the same time; each job installs from the local
      // mirror into its own .terraform (and its own plugin cache), as a GitLab job does on its runner.
      TF_CLI_CONFIG_FILE: tools.cliConfig,
      // Where the tool finds its provider mirror (an engine run writes its own CLI configuration, issue 45).
      SECRETSTORE_IAC_CACHE: tools.cacheDir,
      ...this.options.variables,
      ...variables,
    };
    const r = await runCollected(
      GLCI,
      // A scenario with a stand-in of the GitLab API gives its address and the project's ID instead of gitlab-ci-local's.
      [...args, '--shell-isolation', '--no-color', '--json-schema-validation', '--ignore-predefined-vars', ['CI_PIPELINE_SOURCE', 'CI_COMMIT_REF_PROTECTED', ...['CI_API_V4_URL', 'CI_PROJECT_ID'].filter((v) => v in all)].join(','), ...glciVariables(all)],
      cwd,
      // gitlab-ci-local's environment is the test's: without the administrator's token.
      { HOME: this.root, VAULT_TOKEN: '' },
    );
    return { ...r, job: (job: string) => jobLines(r.output, job) };
  }
}

/** gitlab-ci-local's job arguments: the jobs, with what they need unless `only`. */
function jobArguments(options: { jobs?: readonly string[]; only?: boolean }): string[] {
  if (options.jobs === undefined) return [];
  return options.only ? [...options.jobs] : [...options.jobs, '--needs'];
}
