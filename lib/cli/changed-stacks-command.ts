import { readStackDigests } from '../sources/stack-digest';
import { renderStackSelectionMarkdown } from '../sources/stack-selection-markdown';
import { selectChangedStacks } from '../sources/stack-selection';
import { ConfigurationSource } from '../sources/configuration-source';
import { terminalJson, terminalLine, terminalText } from '../private/terminal-text';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { outputFilePath, writeOutputFile } from './output-file';
import { openSourceArgument, refSynthesizer, SOURCE_HELP } from './source-argument';
import { highlightMarkdown, stylingEnabled } from './terminal-highlight';

/** `secretstore-iac changed-stacks BASE HEAD`: the stacks a change touches, for pipelines. */
export const changedStacksCommand: Command = {
  name: 'changed-stacks',
  summary: 'the stacks whose synthesized content differs between two configurations, and their dependents',
  usage: [
    'Usage: secretstore-iac changed-stacks BASE HEAD [--format lines|md|json] [--markdown-file FILE]',
    '',
    'Prints the stacks of HEAD to plan and apply for the change from BASE: those whose content digest',
    'differs (added stacks included), and every stack that depends on one of them, directly or not',
    '(cdktf\'s addDependency, recorded in manifest.json), in dependency order: a stack after the stacks',
    'it depends on. A stack\'s digest is SHA-256 over the configuration files of its directory:',
    'cdk.tf.json, and moves.tf.json or adopt-imports.tf.json when present (docs/pipelines.md).',
    '',
    SOURCE_HELP.replace('SOURCE is', 'BASE and HEAD are each'),
    '',
    '  --format lines  one stack name per line on standard output, nothing else (default); a stack',
    '                  of BASE that HEAD no longer has is reported on standard error, never selected',
    '                  (`moves` writes its directory; the pipeline plans it as a retired stack)',
    '  --format md     per stack: change, planned or not, digests (for a merge-request note)',
    '  --format json   the same, with the full digests and the files each covers',
    '  --markdown-file FILE  also write the md form to FILE (the pipeline\'s merge-request note)',
    '',
    'Exit codes: 0 the stacks were printed (none when nothing changed), 2 usage error,',
    '3 runtime error (a side that cannot be synthesized or read).',
    '',
    'Example (CI): for stack in $(secretstore-iac changed-stacks origin/main cdktf.out); do ...; done',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(args, { format: { type: 'string' }, 'markdown-file': { type: 'string' } }, { min: 2, max: 2, names: 'BASE and HEAD' });
    const format = formatOption(values.format, ['lines', 'md', 'json'] as const, 'lines');
    const markdownFile = typeof values['markdown-file'] === 'string' ? outputFilePath('--markdown-file', values['markdown-file'], context.cwd) : undefined;
    const sides: ConfigurationSource[] = [];
    // One synthesizer for both sides: two refs of one tree are synthesized once.
    const synthesizer = refSynthesizer(context);
    try {
      for (const argument of positionals) sides.push(await openSourceArgument(argument, context, synthesizer));
      const [base, head] = sides.map((s) => readStackDigests(s.dir));
      const selection = selectChangedStacks(base, head);
      const labels = { base: sides[0].label, head: sides[1].label };
      const markdown = () => renderStackSelectionMarkdown(selection, labels);
      if (markdownFile !== undefined) writeOutputFile('--markdown-file', markdownFile, markdown());
      if (format === 'json') {
        const files = (name: string) => head.get(name)?.files ?? [];
        context.stdout(terminalJson({ ...labels, ...selection, stacks: selection.stacks.map((s) => ({ ...s, files: files(s.name) })) }));
      } else if (format === 'md') {
        context.stdout(highlightMarkdown(terminalText(markdown().trimEnd()), stylingEnabled(context.isTerminal, context.env)));
      } else {
        selection.removed.forEach((name) => context.stderr(terminalLine(`removed stack ${name}: in ${labels.base}, not in ${labels.head}; not selected: \`secretstore-iac moves\` writes its directory, planned as a retired stack (docs/pipelines.md §8)`)));
        if (selection.selected.length > 0) context.stdout(selection.selected.map(terminalLine).join('\n'));
      }
      return ExitCode.ok;
    } finally {
      sides.forEach((s) => s.dispose());
      synthesizer.dispose();
    }
  },
};
