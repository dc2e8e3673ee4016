import * as path from 'path';
import { diffAccess, hasAccessChange } from '../access/access-diff';
import { renderAccessDiffMarkdown } from '../access/access-diff-markdown';
import { accessChangeRecord, canonicalJson } from '../access/access-change-record';
import { AccessModel } from '../access/access-model';
import { PolicyParser } from '../acl/policy-parser';
import { Command, CommandContext } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { LIVE_SOURCE, loadConfiguration } from './live-source';
import { refSynthesizer, SOURCE_HELP } from './source-argument';
import { terminalJson, terminalText } from '../private/terminal-text';
import { highlightMarkdown, stylingEnabled } from './terminal-highlight';
import { PlanReview, planReviewNeedsAttention, reviewSavedPlans } from '../access/plan-review';
import { planStoreConfigurations } from '../access/plan-store-configuration';
import { renderPlanReviewMarkdown } from '../access/plan-review-markdown';
import { readSynthOutput } from '../sources/synth-output';
import { readSavedPlanFiles, savedPlanFiles } from './saved-plan-files';
import { UsageError } from './usage-error';
import { readInvariantsOption, usageOnSelection } from './invariants-option';
import { AUDIT_WINDOW_HELP, AUDIT_WINDOW_OPTIONS, auditLogFiles, auditWindowOption } from './audit-log-options';
import { outputFilePath, writeOutputFile } from './output-file';
import { usageOfAuditLog } from '../usage/usage-report';
import { AccessDiffWithUsage, UsageSource, withRemovedAccessUse } from '../usage/removed-access-use';

/** Where the review's usage comes from, as given on the command line. */
function usageSource(usageFile: string | undefined, usageLogs: readonly string[]): UsageSource {
  return usageFile !== undefined ? { kind: 'usage-file', files: [usageFile] } : { kind: 'audit-log', files: usageLogs };
}
import { removedAccessUseSection } from '../usage/removed-access-use-markdown';
import { readUsageFileOption } from './usage-file-option';

/** `secretstore-iac access-diff BASE HEAD` (or `--plans DIR`: from saved plans): effective access compared, for a merge-request comment. */
export const accessDiffCommand: Command = {
  name: 'access-diff',
  summary: 'compare effective access between two configurations (Markdown for a merge-request comment)',
  usage: [
    'Usage: secretstore-iac access-diff BASE HEAD [--format md|json] [--risk-flag-count FILE] [--invariants FILE]',
    '                                   [--usage-log FILE... [--since TIME] [--until TIME] | --usage FILE]',
    '       secretstore-iac access-diff --plans DIR | --plan STACK=FILE ... [--outdir DIR] [--engine ENGINE]',
    '                                   [--format md|json] [--risk-flag-count FILE] [--invariants FILE]',
    '                                   [--usage-log FILE... | --usage FILE] [--access-change FILE]',
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
    'Plan mode (--plans, --plan): the review reads the engine\'s saved plans instead of the synthesized',
    'JSON: before is each plan\'s refreshed state, after the values the engine will write (an override',
    'file, a raw resource, a name written as an expression or an input variable included). A plan file is',
    'shown with `ENGINE show -json` in OUTDIR/stacks/STACK (initialised; the engine as `tf` chooses it);',
    'a FILE ending in .json is that JSON already. Stacks without a plan are read from OUTDIR on both sides.',
    'The note names each plan file with its SHA-256; a value the review reads that is unknown until apply,',
    'or a change to a resource it does not read, is a risk flag and makes the exit code 1 (docs/access.md).',
    '',
    'With the store\'s audit log (--usage-log, read as `usage` reads it, against BASE) or a usage file',
    '(--usage: `secretstore-iac usage --format json`, as the drift job writes it), the note shows each',
    'removed or narrowed grant\'s last use in the window, and a risk flag for each grant whose requests',
    'in the window HEAD refuses: "this change denies requests made N days ago" (docs/usage.md). In plan',
    'mode the log is read against the store before the apply (the plans\' refreshed state).',
    '',
    '  --format md|json        Markdown (default) or JSON',
    '  --risk-flag-count FILE  also write the number of risk flags to FILE (one line; for CI gates)',
    '  --invariants FILE       a security team\'s access invariants (JSON or YAML, docs/invariants.md):',
    '                          each one HEAD breaks is a blocking "access invariant broken" flag (exit 1)',
    '  --usage-log FILE        an audit log file (repeat for rotated files; .gz or not)',
    ...AUDIT_WINDOW_HELP.map((line) => line.replace('  --', '    --')),
    '  --usage FILE            a usage file (the JSON of `secretstore-iac usage`) instead of --usage-log',
    '  --plans DIR             every <stack>.tfplan (and <stack>.tfplan.json) in DIR',
    '  --plan STACK=FILE       one stack\'s saved plan (repeat for more)',
    '  --outdir DIR            the synthesized output (default cdktf.out), plan mode only',
    '  --engine ENGINE         the engine that shows the plans (as for `tf`), plan mode only',
    '  --access-change FILE    also write the canonical access change (sorted JSON: per identity and path',
    '                          the capabilities before and after, bindings, objects, plan digests), plan',
    '                          mode only: the approval record of the pipeline (docs/pipelines.md §13)',
    '',
    'Exit codes: 0 no access change, 1 access changed (plan mode: or the review is incomplete),',
    '2 usage error, 3 runtime error.',
    '',
    'Example (CI): secretstore-iac access-diff origin/main HEAD > access-diff.md',
    'In the configuration pipeline: access-diff cdktf.base.out cdktf.out (both synthesized once, by the synth job).',
    'From saved plans: secretstore-iac access-diff --plans secretstore-iac-plans > access-diff.md',
  ].join('\n'),
  run: (args, context) => usageOnSelection(() => runAccessDiff(args, context)),
};

async function runAccessDiff(args: readonly string[], context: CommandContext): Promise<number> {
    const { values, positionals } = parseCommandArguments(
      args,
      {
        format: { type: 'string' },
        'risk-flag-count': { type: 'string' },
        'access-change': { type: 'string' },
        plans: { type: 'string' },
        plan: { type: 'string', multiple: true },
        outdir: { type: 'string' },
        engine: { type: 'string' },
        invariants: { type: 'string', multiple: true },
        'usage-log': { type: 'string', multiple: true },
        usage: { type: 'string' },
        ...AUDIT_WINDOW_OPTIONS,
      },
      { min: 0, max: 2, names: 'BASE and HEAD' },
    );
    const format = formatOption(values.format, ['md', 'json'] as const, 'md');
    const countFile = typeof values['risk-flag-count'] === 'string' ? outputFilePath('--risk-flag-count', values['risk-flag-count'], context.cwd) : undefined;
    const writeCount = (flags: number) => {
      if (countFile !== undefined) writeOutputFile('--risk-flag-count', countFile, `${flags}\n`);
    };
    const invariants = values.invariants === undefined ? [] : readInvariantsOption(values.invariants as string[], context.cwd);
    const usageLogs = (values['usage-log'] as string[] | undefined) ?? [];
    const usageFile = values.usage as string | undefined;
    if (usageLogs.length > 0 && usageFile !== undefined) throw new UsageError('--usage-log and --usage: give one or the other (the audit log, or a usage file written from it)');
    if ((values.since !== undefined || values.until !== undefined) && usageLogs.length === 0) {
      throw new UsageError('--since and --until go with --usage-log (a usage file carries its own window)');
    }
    const now = Date.now();
    const window = auditWindowOption(values, now);
    // Read before the configurations are synthesized: a wrong file fails fast.
    const logs = auditLogFiles(usageLogs, context.cwd, '--usage-log');
    const written = usageFile !== undefined ? readUsageFileOption(usageFile, context.cwd) : undefined;
    const planArguments = (values.plan as string[] | undefined) ?? [];
    if (values.plans !== undefined || planArguments.length > 0) {
      if (positionals.length > 0) throw new UsageError('--plans / --plan replace BASE and HEAD: give one or the other');
      const outdir = path.resolve(context.cwd, String(values.outdir ?? 'cdktf.out'));
      const files = savedPlanFiles(planArguments, values.plans as string | undefined, context.cwd);
      const plans = readSavedPlanFiles(files, outdir, values.engine as string | undefined, context);
      const synthesized = readSynthOutput(outdir);
      const planned = await reviewSavedPlans(synthesized, plans, undefined, { invariants });
      let review: PlanReview = planned;
      let afterFlags: string[] | undefined;
      if (written !== undefined || logs.length > 0) {
        // The usage is read against the store before the apply (each plan's refreshed state).
        const parser = new PolicyParser();
        const sides = planStoreConfigurations(synthesized, plans);
        const [base, head] = await Promise.all([AccessModel.load(sides.base, parser), AccessModel.load(sides.head, parser)]);
        const usage = written ?? (await usageOfAuditLog(logs, window, base, sides.base));
        const diff = withRemovedAccessUse(planned.diff, base, head, usage, usageSource(usageFile, usageLogs), now);
        review = { ...planned, diff };
        afterFlags = removedAccessUseSection(diff.usage);
      }
      if (format === 'json') context.stdout(terminalJson(review));
      else context.stdout(highlightMarkdown(terminalText(renderPlanReviewMarkdown(review, afterFlags).trimEnd()), stylingEnabled(context.isTerminal, context.env)));
      writeCount(review.diff.flags.length);
      // The canonical record of the same review: the note's approval record, the default branch's comparison (docs/pipelines.md §13).
      if (typeof values['access-change'] === 'string') writeOutputFile('--access-change', outputFilePath('--access-change', values['access-change'], context.cwd), `${canonicalJson(accessChangeRecord(review, plans))}\n`);
      return planReviewNeedsAttention(review) ? ExitCode.accessChanged : ExitCode.ok;
    }
    if (values.outdir !== undefined || values.engine !== undefined || values['access-change'] !== undefined) throw new UsageError('--outdir, --engine and --access-change go with --plans / --plan');
    if (positionals.length !== 2) throw new UsageError(`expects BASE and HEAD (or --plans), got ${positionals.length === 0 ? 'no argument' : `${positionals.length} arguments`}`);
    const sides = [];
    // One synthesizer for both sides: two refs of one tree are synthesized once.
    const synthesizer = refSynthesizer(context);
    try {
      for (const argument of positionals) sides.push(await loadConfiguration(argument, context, { synthesizer }));
    } finally {
      synthesizer.dispose();
    }
    // One parser for both sides: a policy text present in both is parsed once.
    const parser = new PolicyParser();
    const [base, head] = await Promise.all(sides.map((s) => AccessModel.load(s.configuration, parser)));
    const usage = written ?? (logs.length > 0 ? await usageOfAuditLog(logs, window, base, sides[0].configuration) : undefined);
    const withUsage: AccessDiffWithUsage | undefined = usage === undefined ? undefined : withRemovedAccessUse(diffAccess(base, head, { invariants }), base, head, usage, usageSource(usageFile, usageLogs), now);
    const diff = withUsage ?? diffAccess(base, head, { invariants });
    if (format === 'json') context.stdout(terminalJson(diff));
    else {
      const afterFlags = withUsage === undefined ? undefined : removedAccessUseSection(withUsage.usage);
      const markdown = renderAccessDiffMarkdown(diff, { base: sides[0].label, head: sides[1].label, afterFlags });
      context.stdout(highlightMarkdown(terminalText(markdown.trimEnd()), stylingEnabled(context.isTerminal, context.env)));
    }
    writeCount(diff.flags.length);
    return hasAccessChange(diff) ? ExitCode.accessChanged : ExitCode.ok;
}
