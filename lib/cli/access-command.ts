import { AccessModel } from '../access/access-model';
import { accessReport } from '../access/access-report';
import { renderAccessReportMarkdown } from '../access/access-report-markdown';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { LIVE_SOURCE, loadConfiguration } from './live-source';
import { DEFAULT_SOURCE, SOURCE_HELP } from './source-argument';
import { terminalJson, terminalText } from '../private/terminal-text';
import { highlightMarkdown, stylingEnabled } from './terminal-highlight';

/** `secretstore-iac access [SOURCE]`: per identity, its bindings and every path it can reach. */
export const accessCommand: Command = {
  name: 'access',
  summary: 'per identity: bindings (audiences, claims, TTLs) and every path pattern with its capabilities',
  usage: [
    'Usage: secretstore-iac access [SOURCE] [--format md|json] [--identity NAME]... [--include-default]',
    '',
    'Reports, for every identity (JWT or AppRole role, named <mount>/<role>, e.g. jwt/registry-ci),',
    'its bindings and every path pattern its tokens hold, with capabilities and the policies they',
    'come from. Rules of the built-in default policy are summarised unless --include-default.',
    '',
    SOURCE_HELP,
    `SOURCE defaults to ${DEFAULT_SOURCE}; \`${LIVE_SOURCE}\` reads the live store (VAULT_TOKEN, read/list only).`,
    '',
    '  --format md|json     Markdown (default) or JSON',
    '  --identity NAME      only this identity (repeatable)',
    '  --include-default    list the rules of the built-in default policy too',
    '',
    'Exit codes: 0 report written, 2 usage error, 3 runtime error.',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(
      args,
      { format: { type: 'string' }, identity: { type: 'string', multiple: true }, 'include-default': { type: 'boolean' } },
      { min: 0, max: 1, names: 'at most one SOURCE' },
    );
    const format = formatOption(values.format, ['md', 'json'] as const, 'md');
    const { configuration } = await loadConfiguration(positionals[0] ?? DEFAULT_SOURCE, context);
    const model = await AccessModel.load(configuration);
    const report = accessReport(model, {
      includeDefault: values['include-default'] === true,
      identities: (values.identity as string[] | undefined) ?? [],
    });
    // Live reports carry the store's text: escaped before the library adds its own styling.
    if (format === 'json') context.stdout(terminalJson(report));
    else context.stdout(highlightMarkdown(terminalText(renderAccessReportMarkdown(report).trimEnd()), stylingEnabled(context.isTerminal, context.env)));
    return ExitCode.ok;
  },
};
