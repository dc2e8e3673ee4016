import * as fs from 'fs';
import * as path from 'path';
import { diffAccess, hasAccessChange } from '../access/access-diff';
import { renderAccessDiffMarkdown } from '../access/access-diff-markdown';
import { AccessModel } from '../access/access-model';
import { PolicyParser } from '../acl/policy-parser';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { LIVE_SOURCE, loadConfiguration } from './live-source';
import { SOURCE_HELP } from './source-argument';
import { terminalJson, terminalText } from '../private/terminal-text';
import { highlightMarkdown, stylingEnabled } from './terminal-highlight';

/** `secretstore-iac access-diff BASE HEAD`: effective access compared, for a merge-request comment. */
export const accessDiffCommand: Command = {
  name: 'access-diff',
  summary: 'compare effective access between two configurations (Markdown for a merge-request comment)',
  usage: [
    'Usage: secretstore-iac access-diff BASE HEAD [--format md|json] [--risk-flag-count FILE]',
    '',
    'Compares who can do what between BASE and HEAD: identities added or removed; per identity,',
    'capabilities gained and lost per path pattern; changed bindings (audiences, bound claims,',
    'TTLs, policies); and risk flags (people gain a path, with the kind of machine path and the',
    'stated machinePathReason; login method added or changed; default policy changed; wildcard',
    'broadened; path readable by two applications; sudo or deny changed; TTL raised; binding',
    'loosened), one per changed setting with every identity it affects (docs/access.md). Policy',
    'text changes that do not change access (comments, order) are no change.',
    '',
    SOURCE_HELP.replace('SOURCE is', 'BASE and HEAD are each'),
    `Either may be \`${LIVE_SOURCE}\`: the live store at SECRETSTORE_ADDR / VAULT_ADDR, read with the token`,
    'of VAULT_TOKEN (read and list only: docs/adoption.md), e.g. `access-diff live HEAD`.',
    '',
    '  --format md|json        Markdown (default) or JSON',
    '  --risk-flag-count FILE  also write the number of risk flags to FILE (one line; for CI gates)',
    '',
    'Exit codes: 0 no access change, 1 access changed, 2 usage error, 3 runtime error.',
    '',
    'Example (CI): secretstore-iac access-diff origin/main HEAD > access-diff.md',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(args, { format: { type: 'string' }, 'risk-flag-count': { type: 'string' } }, { min: 2, max: 2, names: 'BASE and HEAD' });
    const format = formatOption(values.format, ['md', 'json'] as const, 'md');
    const sides = [];
    for (const argument of positionals) sides.push(await loadConfiguration(argument, context));
    // One parser for both sides: a policy text present in both is parsed once.
    const parser = new PolicyParser();
    const [base, head] = await Promise.all(sides.map((s) => AccessModel.load(s.configuration, parser)));
    const diff = diffAccess(base, head);
    if (format === 'json') context.stdout(terminalJson(diff));
    else {
      const markdown = renderAccessDiffMarkdown(diff, { base: sides[0].label, head: sides[1].label });
      context.stdout(highlightMarkdown(terminalText(markdown.trimEnd()), stylingEnabled(context.isTerminal, context.env)));
    }
    const countFile = values['risk-flag-count'];
    if (typeof countFile === 'string') fs.writeFileSync(path.resolve(context.cwd, countFile), `${diff.flags.length}\n`);
    return hasAccessChange(diff) ? ExitCode.accessChanged : ExitCode.ok;
  },
};
