import { PlatformRule, RuleFinding } from './platform-rule';
import { AgentConfigurations } from '../constructs/agent-configuration';
import { CiLoginTemplate } from '../constructs/ci-login-template';
import { deniedEnvironmentVariableReason } from '../model/environment-variable-name';
import { ValidationProblem } from '../model/validation-problem';

/** The rule's finding for one variable a declaration produces. */
function finding(constructPath: string, field: string, key: string, variable: string, where: string, fix: string): RuleFinding | undefined {
  const why = deniedEnvironmentVariableReason(variable);
  if (why === undefined) return undefined;
  return {
    constructPath,
    problem: new ValidationProblem(
      field,
      key,
      `becomes the environment variable ${variable} ${where}; ${why}: a secret may not set it (docs/boundaries.md §4); ${fix}`,
      'SSI-R11',
    ),
  };
}

/**
 * SSI-R11: secret keys become environment variables (the CI login's exports, the agent's env file).
 * A key that becomes `LD_PRELOAD`, `BASH_ENV`, `PATH`, `NODE_OPTIONS`, `VAULT_ADDR` or `CI_JOB_TOKEN`
 * lets whoever writes the secret, or names its key, run code or redirect tokens in every consumer.
 * The deny-list is {@link DENIED_ENVIRONMENT_VARIABLES}.
 */
export const SSI_R11: PlatformRule = {
  id: 'SSI-R11',
  description:
    'No secret key becomes an environment variable that a loader, shell, language runtime, HTTP client, store client or the CI system reads (LD_*, BASH_ENV, PATH, NODE_OPTIONS, HTTPS_PROXY, VAULT_*, CI_* and the rest of the documented deny-list), neither in the CI login\'s exports nor in an agent\'s env file.',
  spec: '§2.4, §2.5',
  check: (d) => {
    const findings: RuleFinding[] = [];
    const seen = new Set<string>();
    const add = (f: RuleFinding | undefined) => {
      const id = f && `${f.constructPath}\n${String(f.problem)}`;
      if (f && !seen.has(id!)) {
        seen.add(id!);
        findings.push(f);
      }
    };
    const all = d.stacks.flatMap((s) => s.node.findAll());
    for (const template of all.filter((c): c is CiLoginTemplate => c instanceof CiLoginTemplate)) {
      for (const job of template.jobTemplates()) {
        for (const read of job.reads) {
          for (const { key, variable } of read.variables) {
            add(finding(read.source, 'keys', key, variable, `in the CI job ${job.jobName}`, 'rename the key, or set variablePrefixes of the CI template'));
          }
        }
      }
    }
    for (const agents of all.filter((c): c is AgentConfigurations => c instanceof AgentConfigurations)) {
      for (const app of agents.applications) {
        for (const v of agents.templateOf(app).variables) {
          const sub = v.secret.path.logical.split('/').pop();
          add(finding(app.node.path, `secrets["${sub}"].keys`, v.key, v.name, `in the agent's env file of ${app.roleName}`, 'rename the key'));
        }
      }
    }
    return findings;
  },
};
