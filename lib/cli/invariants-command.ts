import { AccessModel } from '../access/access-model';
import { invariantSubjects } from '../access/invariant-subjects';
import { invariantViolations } from '../invariants/invariant-check';
import { violationText } from '../invariants/invariant-violation';
import { terminalJson, terminalLine } from '../private/terminal-text';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { readInvariantsOption, usageOnSelection } from './invariants-option';
import { assertInvariantsSelect } from '../invariants/invariant-selection';
import { LIVE_SOURCE, loadConfiguration } from './live-source';
import { DEFAULT_SOURCE, SOURCE_HELP } from './source-argument';
import { UsageError } from './usage-error';

/** `secretstore-iac invariants check [SOURCE] --invariants FILE`: the access invariants a configuration or the live store breaks. */
export const invariantsCommand: Command = {
  name: 'invariants',
  summary: "check a security team's access invariants against a configuration or the live store",
  usage: [
    'Usage: secretstore-iac invariants check [SOURCE] --invariants FILE [--format text|json]',
    '',
    'Checks every identity of SOURCE (its JWT, OIDC and AppRole roles, with the policies on their',
    'tokens) against the invariants in FILE (JSON or YAML, docs/invariants.md): statements of access',
    'that must never be granted ("no CI identity reads secret/data/+/prod/*"). Each violation names the',
    'invariant, the identity and its kind, the capability, a request path the invariant covers, and the',
    'rule and policies that grant it. Both sides are evaluated as the store evaluates ACLs.',
    '',
    SOURCE_HELP,
    `SOURCE defaults to ${DEFAULT_SOURCE}; \`${LIVE_SOURCE}\` reads the live store (VAULT_TOKEN, read/list only), so a`,
    'policy made by hand on the store and attached to a role is checked like a declared one.',
    '',
    '  --invariants FILE    the invariants (required)',
    '  --format text|json   plain lines (default) or JSON',
    '',
    'Exit codes: 0 no invariant broken, 1 an invariant is broken, 2 usage error, 3 runtime error.',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(
      args,
      { invariants: { type: 'string', multiple: true }, format: { type: 'string' } },
      { min: 1, max: 2, names: 'check and an optional SOURCE' },
    );
    if (positionals[0] !== 'check') throw new UsageError(`unknown subcommand "${positionals[0]}": use \`invariants check [SOURCE] --invariants FILE\``);
    const format = formatOption(values.format, ['text', 'json'] as const, 'text');
    if (values.invariants === undefined) throw new UsageError('--invariants FILE is required: the access invariants to check (docs/invariants.md)');
    const invariants = readInvariantsOption(values.invariants as string[], context.cwd);
    const { configuration, label } = await loadConfiguration(positionals[1] ?? DEFAULT_SOURCE, context);
    const model = await AccessModel.load(configuration);
    const subjects = invariantSubjects(model);
    usageOnSelection(() => assertInvariantsSelect(subjects, invariants));
    const violations = invariantViolations(subjects, invariants, model.namespaces);
    if (format === 'json') context.stdout(terminalJson({ source: label, invariants: invariants.length, identities: configuration.identities.length, violations }));
    else {
      const head = `${terminalLine(label)}: ${configuration.identities.length} identities, ${invariants.length} invariants, ${violations.length} ${violations.length === 1 ? 'violation' : 'violations'}`;
      context.stdout([head, ...violations.map((v) => `  ${terminalLine(violationText(v))}`)].join('\n'));
    }
    return violations.length > 0 ? ExitCode.invariantBroken : ExitCode.ok;
  },
};
