import { Construct } from 'constructs';
import {
  E2eJobOptions,
  E2eLoginOptions,
  PlaywrightConfigOptions,
  renderE2eJobYaml,
  renderGlobalSetup,
  renderPlaywrightConfig,
} from '../render/e2e-playwright';
import { ValidationProblem } from '../model/validation-problem';
import { IArtifactSource, SynthesisArtifact } from './synthesis-artifact';

/** Properties of {@link E2eTestTemplate}. */
export interface E2eTestTemplateProps extends E2eJobOptions, PlaywrightConfigOptions {
  /** Field names of the backend login and the saved state (the spec does not show them). */
  readonly login?: E2eLoginOptions;
}

/**
 * The end-to-end test conventions (spec §2.5–2.7, §5.7, §8) as files: `ci/secretstore-e2e.gitlab-ci.yml`
 * (the `e2e-test` job), `e2e/global-setup.ts` and `e2e/playwright.config.ts`.
 */
export class E2eTestTemplate extends Construct implements IArtifactSource {
  private readonly props: E2eTestTemplateProps;

  constructor(scope: Construct, id: string, props: E2eTestTemplateProps = {}) {
    super(scope, id);
    this.props = props;
    this.node.addValidation({
      validate: () => {
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
        return problems;
      },
    });
  }

  /** The job file, the global setup and the Playwright configuration. */
  artifacts(): SynthesisArtifact[] {
    return [
      { path: 'ci/secretstore-e2e.gitlab-ci.yml', content: renderE2eJobYaml(this.props) },
      { path: 'e2e/global-setup.ts', content: renderGlobalSetup(this.props.login) },
      { path: 'e2e/playwright.config.ts', content: renderPlaywrightConfig(this.props) },
    ];
  }
}
