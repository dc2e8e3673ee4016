import { Construct } from 'constructs';
import {
  E2eJobOptions,
  E2eLoginOptions,
  PlaywrightConfigOptions,
  renderE2eGitignore,
  renderE2eJobYaml,
  renderGlobalSetup,
  renderPlaywrightConfig,
  renderReportingReporter,
} from '../render/e2e-playwright';
import { ValidationProblem } from '../model/validation-problem';
import { IArtifactSource, SynthesisArtifact } from './synthesis-artifact';
import { CheckedProps, expectShape, expectString, expectStringArray, optional, PropsSchema } from '../model/props-check';
import { httpUrlProblems } from '../model/http-url';
import { SecretStoreStack } from './secret-store-stack';

/** The run-time checks of {@link E2eTestTemplateProps}. */
export const E2E_TEST_TEMPLATE_SCHEMA: PropsSchema = {
  ciBaseUrl: optional(expectString),
  branch: optional(expectString),
  image: optional(expectString),
  needs: optional(expectStringArray),
  reportingReporter: optional(expectString),
  browserExecutablePath: optional(expectString),
  login: optional(
    expectShape({
      usernameField: optional(expectString),
      passwordField: optional(expectString),
      userField: optional(expectString),
      storageKey: optional(expectString),
      entryFields: optional(expectShape({ tokenKey: expectString, userKey: expectString })),
    }),
  ),
};

/** A CI/CD variable reference (`$DEV_ENVIRONMENT_URL`, `${DEV_ENVIRONMENT_URL}`), which GitLab expands in the job. */
const VARIABLE_REFERENCE = /^\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})$/;

/** Properties of {@link E2eTestTemplate}. */
export interface E2eTestTemplateProps extends E2eJobOptions, PlaywrightConfigOptions {
  /** Field names of the backend login and the saved state (the spec does not show them). */
  readonly login?: E2eLoginOptions;
}

/**
 * The end-to-end test conventions (spec §2.5–2.7, §5.7, §8) as files: `ci/secretstore-e2e.gitlab-ci.yml`
 * (the `e2e-test` job), `e2e/global-setup.ts`, `e2e/playwright.config.ts`, `e2e/reporting-reporter.ts`
 * (used only when `REPORTING_ENDPOINT` is set) and `e2e/.gitignore` (`.auth/` and the reports).
 */
export class E2eTestTemplate extends Construct implements IArtifactSource {
  private readonly props: E2eTestTemplateProps;

  constructor(scope: Construct, id: string, props: E2eTestTemplateProps = {}) {
    super(scope, id);
    const checked = new CheckedProps(E2E_TEST_TEMPLATE_SCHEMA, props, true);
    // Only well-typed fields are rendered; the others are reported and left at their defaults.
    props = Object.fromEntries(
      Object.keys(E2E_TEST_TEMPLATE_SCHEMA)
        .map((k) => [k, checked.value<unknown>(k, undefined)])
        .filter(([, v]) => v !== undefined),
    ) as E2eTestTemplateProps;
    this.props = props;
    this.node.addValidation({
      validate: () => {
        const typeProblems = checked.problems.map(String);
        const login = props.login ?? {};
        const fields: Array<[string, string | undefined]> = [
          ['login.usernameField', login.usernameField],
          ['login.passwordField', login.passwordField],
          ['login.userField', login.userField],
          ['login.storageKey', login.storageKey],
          ['login.entryFields.tokenKey', login.entryFields?.tokenKey],
          ['login.entryFields.userKey', login.entryFields?.userKey],
        ];
        const problems = fields
          .filter(([, v]) => v !== undefined && v.trim() === '')
          .map(([name, v]) => String(new ValidationProblem(name, v, 'must not be empty')));
        // The branch is a string of the job's rules expression, which has no escapes.
        if (props.branch !== undefined && /["\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/.test(props.branch)) {
          problems.push(String(new ValidationProblem('branch', props.branch, 'must not hold a double quote or a control character')));
        }
        for (const job of props.needs ?? []) {
          if (job.trim() === '' || /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/.test(job)) {
            problems.push(String(new ValidationProblem('needs', job, 'must be a job name: not empty, no control character')));
          }
        }
        // The target is a variable GitLab expands, or a URL under the platform's URL rules.
        if (props.ciBaseUrl !== undefined && !VARIABLE_REFERENCE.test(props.ciBaseUrl)) {
          const policy = this.node.scopes.some((c) => c instanceof SecretStoreStack) ? SecretStoreStack.of(this).settings.httpPolicy : {};
          problems.push(...httpUrlProblems('ciBaseUrl', props.ciBaseUrl, policy).map(String));
        }
        return [...typeProblems, ...problems];
      },
    });
  }

  /** The job file, the global setup, the Playwright configuration, the reporting reporter and the `.gitignore`. */
  artifacts(): SynthesisArtifact[] {
    return [
      { path: 'ci/secretstore-e2e.gitlab-ci.yml', content: renderE2eJobYaml(this.props) },
      { path: 'e2e/global-setup.ts', content: renderGlobalSetup(this.props.login) },
      { path: 'e2e/playwright.config.ts', content: renderPlaywrightConfig(this.props) },
      { path: 'e2e/reporting-reporter.ts', content: renderReportingReporter() },
      { path: 'e2e/.gitignore', content: renderE2eGitignore() },
    ];
  }
}
