import { AccessModel } from '../access/access-model';
import { whoCan } from '../access/who-can';
import { isStoreCapability } from '../acl/store-capability';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { LIVE_SOURCE, loadConfiguration } from './live-source';
import { DEFAULT_SOURCE, SOURCE_HELP } from './source-argument';
import { terminalJson, terminalLine } from '../private/terminal-text';
import { UsageError } from './usage-error';

/** `secretstore-iac who-can CAPABILITY PATH [SOURCE]`: the identities that can, and through which rule. */
export const whoCanCommand: Command = {
  name: 'who-can',
  summary: 'the identities that can use a capability on a path, and through which rule',
  usage: [
    'Usage: secretstore-iac who-can CAPABILITY PATH [SOURCE] [--format text|json]',
    '',
    'Lists the identities whose tokens may use CAPABILITY (create, read, update, patch, delete,',
    'list, scan, sudo) on the request PATH (e.g. secret/data/registry/svc-orchestrator), each with',
    'the one rule that governs the request and the policies behind it; then the identities an',
    'explicit deny rule stops.',
    '',
    SOURCE_HELP,
    `SOURCE defaults to ${DEFAULT_SOURCE}; \`${LIVE_SOURCE}\` reads the live store (VAULT_TOKEN, read/list only).`,
    '',
    '  --format text|json   plain lines (default) or JSON',
    '',
    'Exit codes: 0 answered (even when nobody can), 2 usage error, 3 runtime error.',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(
      args,
      { format: { type: 'string' } },
      { min: 2, max: 3, names: 'CAPABILITY, PATH and an optional SOURCE' },
    );
    const format = formatOption(values.format, ['text', 'json'] as const, 'text');
    const [capability, path, sourceArgument] = positionals;
    if (!isStoreCapability(capability) || capability === 'deny') {
      throw new UsageError(`"${capability}" is not a capability: use create, read, update, patch, delete, list, scan or sudo`);
    }
    const { configuration } = await loadConfiguration(sourceArgument ?? DEFAULT_SOURCE, context);
    const answer = whoCan(await AccessModel.load(configuration), capability, path);
    if (format === 'json') {
      context.stdout(terminalJson(answer));
      return ExitCode.ok;
    }
    const lines = [`${capability} on ${terminalLine(path)}:`];
    if (answer.allowed.length === 0) lines.push('  nobody');
    // Identities, rules and policies may come from the live store: one escaped line each.
    for (const e of answer.allowed) lines.push(`  ${terminalLine(e.identity)}  via "${terminalLine(e.rule)}" (policies: ${terminalLine(e.policies.join(', '))})`);
    if (answer.denied.length > 0) {
      lines.push('denied by an explicit deny rule:');
      for (const e of answer.denied) lines.push(`  ${terminalLine(e.identity)}  by "${terminalLine(e.rule)}" (policies: ${terminalLine(e.policies.join(', '))})`);
    }
    context.stdout(lines.join('\n'));
    return ExitCode.ok;
  },
};
