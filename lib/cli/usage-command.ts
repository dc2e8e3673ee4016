import { AccessModel } from '../access/access-model';
import { renderUsageMarkdown } from '../usage/usage-markdown';
import { usageOfAuditLog } from '../usage/usage-report';
import { renderUsageMatrixSvg } from '../usage/usage-matrix-svg';
import { renderUsageText } from '../usage/usage-text';
import { outputFilePath, writeOutputFile } from './output-file';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { LIVE_SOURCE, loadConfiguration } from './live-source';
import { DEFAULT_SOURCE, SOURCE_HELP } from './source-argument';
import { terminalJson } from '../private/terminal-text';
import { UsageError } from './usage-error';
import { AUDIT_WINDOW_HELP, AUDIT_WINDOW_OPTIONS, auditLogFiles, auditWindowOption } from './audit-log-options';
import { readInvariantsOption, usageOnSelection } from './invariants-option';
import { assertInvariantsSelect } from '../invariants/invariant-selection';
import { invariantSubjects } from '../access/invariant-subjects';
import { resolveStoreNamespace } from '../store/store-namespace-setting';
import { ForbiddenRequestCollector, forbiddenRequestsMarkdown, forbiddenRequestsText } from '../usage/forbidden-requests';

/** `secretstore-iac usage [SOURCE] --log FILE...`: which grants the audit log shows used, never used, denied. */
export const usageCommand: Command = {
  name: 'usage',
  summary: "how the declared access is used: grants used and never used, denied requests, failed logins, from the store's audit log",
  usage: [
    'Usage: secretstore-iac usage [SOURCE] --log FILE [--log FILE...] [--since TIME] [--until TIME] [--format md|json|text] [--matrix FILE]',
    '',
    "Reads the store's file audit device (JSON lines, OpenBao and HashiCorp Vault; plain or gzip-compressed,",
    'rotated files given one --log each, in any order), streamed line by line, and maps each request to',
    'the declared identity whose login issued its token (the login\'s mount path, namespace and role, linked',
    'to the request by the token\'s accessor; a child token is its parent\'s) and to the rule of its policies',
    'that allowed it, evaluated as the store does. A token whose login is not in the log (rotated away: give',
    'the rotated files) is credited to none, whatever its display name: counted as unattributed.',
    'The namespace read is VAULT_NAMESPACE / BAO_NAMESPACE or the stacks\' settings.namespace (they must',
    'agree); entries of other namespaces are counted apart.',
    'Per identity: the grants used (requests, last use); the grants never used in the window',
    '(least-privilege candidates, with the policy and the construct that declares it); the denied',
    'requests (HTTP 403 permission denied) with the spec §7 row and the change that would grant them.',
    'Then the failed logins by auth mount with their §7 cause. Values the store HMACs (tokens,',
    "accessors, Role IDs, Secret IDs, JWTs, a failed login's role and error) stay HMAC-ed: the log",
    'shows a failed login\'s mount, not its role. Requests of tokens no declared identity issued',
    '(root, hand-made tokens) are counted apart; lines that are not audit entries are counted and skipped;',
    'entries dated after the time of the run (more than 5 minutes: a store clock ahead, an edited log) are',
    'counted apart and named, never as use.',
    '',
    SOURCE_HELP,
    `SOURCE defaults to ${DEFAULT_SOURCE}; \`${LIVE_SOURCE}\` reads the live store (VAULT_TOKEN, read/list only).`,
    '',
    '  --log FILE          an audit log file (required; repeat for rotated files; .gz or not)',
    ...AUDIT_WINDOW_HELP,
    '  --invariants FILE   also report each request an access invariant forbids (docs/invariants.md),',
    '                      allowed or not; any makes the exit code 1',
    '  --format md|json|text   Markdown (default), JSON (the usage file access-diff --usage reads:',
    '                      docs/usage.md), or plain lines for the terminal',
    '  --matrix FILE       also write the identity × grant matrix as an SVG picture for the review:',
    '                      per identity and rule used, never used, or (per path) denied; a tooltip per cell',
    '',
    'Exit codes: 0 report written, nothing denied and no failed login; 1 report written with denied',
    'requests, failed logins or entries dated in the future; 2 usage error (a --log that is no readable',
    'file, a --since or --until that is no time); 3 runtime error (a log that is not one, an unreadable configuration).',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(
      args,
      { log: { type: 'string', multiple: true }, ...AUDIT_WINDOW_OPTIONS, format: { type: 'string' }, invariants: { type: 'string', multiple: true }, matrix: { type: 'string' } },
      { min: 0, max: 1, names: 'at most one SOURCE' },
    );
    const format = formatOption(values.format, ['md', 'json', 'text'] as const, 'md');
    const logs = (values.log as string[] | undefined) ?? [];
    if (logs.length === 0) throw new UsageError('--log FILE is required: the file audit device\'s log (sys/audit, type "file", options.file_path)');
    const window = auditWindowOption(values, Date.now());
    const files = auditLogFiles(logs, context.cwd, '--log');
    const matrixFile = typeof values.matrix === 'string' ? outputFilePath('--matrix', values.matrix, context.cwd) : undefined;
    const invariants = values.invariants === undefined ? undefined : readInvariantsOption(values.invariants as string[], context.cwd);
    const { configuration } = await loadConfiguration(positionals[0] ?? DEFAULT_SOURCE, context);
    const model = await AccessModel.load(configuration);
    // An invariant that speaks of nobody checks nothing: refused as `invariants check` refuses it.
    if (invariants !== undefined) usageOnSelection(() => assertInvariantsSelect(invariantSubjects(model), invariants));
    // Requests an invariant forbids: kept apart from the usage aggregate (lib/usage/forbidden-requests.ts).
    const forbidden = invariants === undefined ? undefined : new ForbiddenRequestCollector(model, invariants);
    // The namespace whose identities are read: VAULT_NAMESPACE / BAO_NAMESPACE, which must agree with the
    // stacks' settings.namespace (the live store's is the one read); entries of other namespaces are counted apart.
    const namespace = resolveStoreNamespace(context.env, configuration.namespaces ?? ['']);
    const report = await usageOfAuditLog(files, window, model, configuration, {
      namespace: namespace ?? '',
      ...(forbidden === undefined ? {} : { observe: (identity, entry) => forbidden.add(identity, entry) }),
    });
    const forbiddenRequests = forbidden?.list();
    if (matrixFile !== undefined) writeOutputFile('--matrix', matrixFile, renderUsageMatrixSvg(report));
    if (format === 'json') context.stdout(terminalJson(forbiddenRequests === undefined ? report : { ...report, forbidden: forbiddenRequests }));
    else if (format === 'text') context.stdout([renderUsageText(report), ...(forbiddenRequests === undefined ? [] : ['', forbiddenRequestsText(forbiddenRequests)])].join('\n'));
    else context.stdout([renderUsageMarkdown(report).trimEnd(), ...(forbiddenRequests === undefined ? [] : ['', forbiddenRequestsMarkdown(forbiddenRequests).trimEnd()])].join('\n'));
    const attention = report.failedLogins.length > 0 || report.identities.some((u) => u.denied.length > 0) || (forbiddenRequests ?? []).length > 0 || (report.counts.future ?? 0) > 0;
    return attention ? ExitCode.usageFindings : ExitCode.ok;
  },
};
