import { AccessModel } from '../access/access-model';
import { renderUsageMarkdown } from '../usage/usage-markdown';
import { usageOfAuditLog } from '../usage/usage-report';
import { renderUsageText } from '../usage/usage-text';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { LIVE_SOURCE, loadConfiguration } from './live-source';
import { DEFAULT_SOURCE, SOURCE_HELP } from './source-argument';
import { terminalJson } from '../private/terminal-text';
import { UsageError } from './usage-error';
import { AUDIT_WINDOW_HELP, AUDIT_WINDOW_OPTIONS, auditLogFiles, auditWindowOption } from './audit-log-options';
import { readInvariantsOption } from './invariants-option';
import { ForbiddenRequestCollector, forbiddenRequestsMarkdown, forbiddenRequestsText } from '../usage/forbidden-requests';

/** `secretstore-iac usage [SOURCE] --log FILE...`: which grants the audit log shows used, never used, denied. */
export const usageCommand: Command = {
  name: 'usage',
  summary: "how the declared access is used: grants used and never used, denied requests, failed logins, from the store's audit log",
  usage: [
    'Usage: secretstore-iac usage [SOURCE] --log FILE [--log FILE...] [--since TIME] [--until TIME] [--format md|json|text]',
    '',
    "Reads the store's file audit device (JSON lines, OpenBao and HashiCorp Vault; plain or gzip-compressed,",
    'rotated files given one --log each, in any order), streamed line by line, and maps each request to',
    'the declared identity that made it (JWT role from auth.metadata.role, AppRole role from',
    'auth.metadata.role_name) and to the rule of its policies that allowed it, evaluated as the store does.',
    'Per identity: the grants used (requests, last use); the grants never used in the window',
    '(least-privilege candidates, with the policy and the construct that declares it); the denied',
    'requests (HTTP 403 permission denied) with the spec §7 row and the change that would grant them.',
    'Then the failed logins by auth mount with their §7 cause. Values the store HMACs (tokens,',
    "accessors, Role IDs, Secret IDs, JWTs, a failed login's role and error) stay HMAC-ed: the log",
    'shows a failed login\'s mount, not its role. Requests of tokens no declared identity issued',
    '(root, hand-made tokens) are counted apart; lines that are not audit entries are counted and skipped.',
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
    '',
    'Exit codes: 0 report written, nothing denied and no failed login; 1 report written with denied',
    'requests or failed logins; 2 usage error; 3 runtime error (unreadable log or configuration).',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(
      args,
      { log: { type: 'string', multiple: true }, ...AUDIT_WINDOW_OPTIONS, format: { type: 'string' }, invariants: { type: 'string' } },
      { min: 0, max: 1, names: 'at most one SOURCE' },
    );
    const format = formatOption(values.format, ['md', 'json', 'text'] as const, 'md');
    const logs = (values.log as string[] | undefined) ?? [];
    if (logs.length === 0) throw new UsageError('--log FILE is required: the file audit device\'s log (sys/audit, type "file", options.file_path)');
    const window = auditWindowOption(values, Date.now());
    const files = auditLogFiles(logs, context.cwd, '--log');
    const invariants = values.invariants === undefined ? undefined : readInvariantsOption(String(values.invariants), context.cwd);
    const { configuration } = await loadConfiguration(positionals[0] ?? DEFAULT_SOURCE, context);
    const model = await AccessModel.load(configuration);
    // Requests an invariant forbids: kept apart from the usage aggregate (lib/usage/forbidden-requests.ts).
    const forbidden = invariants === undefined ? undefined : new ForbiddenRequestCollector(model, invariants);
    const report = await usageOfAuditLog(files, window, model, configuration, forbidden === undefined ? undefined : (identity, entry) => forbidden.add(identity, entry));
    const forbiddenRequests = forbidden?.list();
    if (format === 'json') context.stdout(terminalJson(forbiddenRequests === undefined ? report : { ...report, forbidden: forbiddenRequests }));
    else if (format === 'text') context.stdout([renderUsageText(report), ...(forbiddenRequests === undefined ? [] : ['', forbiddenRequestsText(forbiddenRequests)])].join('\n'));
    else context.stdout([renderUsageMarkdown(report).trimEnd(), ...(forbiddenRequests === undefined ? [] : ['', forbiddenRequestsMarkdown(forbiddenRequests).trimEnd()])].join('\n'));
    const attention = report.failedLogins.length > 0 || report.identities.some((u) => u.denied.length > 0) || (forbiddenRequests ?? []).length > 0;
    return attention ? ExitCode.usageFindings : ExitCode.ok;
  },
};
