import { PlatformRule } from './platform-rule';
import { findingField } from './store-name-collisions';
import { ValidationProblem } from '../model/validation-problem';
import { overrideClause } from './override-clause';

/**
 * SSI-R15: every string of a stack's JSON is a Terraform template, so a store object's name is what
 * the engine makes of its text, not the text. The name rules (SSI-R1, SSI-R2, SSI-R7, SSI-R9) and
 * the pipeline's grants compare names as the engine will write them: an expression the library can
 * compute (`${"registry-ci"}`, `Fn.lower("REGISTRY-CI")`, `Fn.join(...)` of literals) is compared as
 * its value; one it cannot (a variable, a data source, a function it does not compute, a directive)
 * is refused here, since the name it takes on the store could be any other object's (a raw policy
 * named by an expression took the CI role's policy, and a CI job read an application's secret).
 */
export const SSI_R15: PlatformRule = {
  id: 'SSI-R15',
  description:
    'Every name of a store object (policy and role names, auth mount paths and types, the auth method a role is on, namespaces), of library constructs and provider resources a user adds, is known at synthesis: plain text, a reference to another resource of its stack, or an expression the library computes as the engine does (a quoted string; lower, upper, trimspace, trimprefix, trimsuffix, replace, join, format of such values). A name holding any other Terraform template sequence (`${...}` of a variable or another function, `%{...}`) is refused, since no name rule could check the name the engine gives it.',
  check: (d) =>
    d.storeObjects.objects.flatMap((o) =>
      o.unresolved.map((u) => ({
        constructPath: o.constructPath,
        problem: new ValidationProblem(
          findingField(u.field),
          u.value,
          `is a Terraform template the engine evaluates when it plans (${u.why}): the name it gives ${o.kind.description} on the store is not known at synthesis, so no name rule can check that it is not another object's; write the name as a plain string (a literal \`\${\` is written \`$\${\` in Terraform JSON: pass the text, the library escapes it)${overrideClause(o)}`,
          'SSI-R15',
        ),
      })),
    ),
};
