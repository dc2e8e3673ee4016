import * as fs from 'node:fs';
import * as path from 'node:path';
import { AccessModel } from '../access/access-model';
import { editedItems, narrowingOf } from '../usage/narrowing';
import { configurationPatch } from '../usage/configuration-patch';
import { renderNarrowingMarkdown, renderNarrowingText } from '../usage/narrowing-text';
import type { editPlatformConfig as EditPlatformConfig } from '../usage/platform-config-edit';
import { PLATFORM_CONFIG_SOURCE } from '../usage/platform-config-source';
import { UsageReport, usageOfAuditLog } from '../usage/usage-report';
import { resolveStoreNamespace } from '../store/store-namespace-setting';
import { AUDIT_WINDOW_HELP, AUDIT_WINDOW_OPTIONS, auditLogFiles, auditWindowOption } from './audit-log-options';
import { Command } from './command';
import { parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { inputFilePath } from './input-file';
import { loadConfiguration } from './live-source';
import { outputFilePath, writeOutputFile } from './output-file';
import { DEFAULT_SOURCE, SOURCE_HELP } from './source-argument';
import { UsageError } from './usage-error';
import { readUsageFileOption } from './usage-file-option';

/** Runs each check, the usage errors of all of them said at once. */
function allProblems<T extends unknown[]>(...checks: { [K in keyof T]: () => T[K] }): T {
  const problems: string[] = [];
  const values = checks.map((check) => {
    try {
      return check();
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      problems.push(e.message);
      return undefined;
    }
  });
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return values as T;
}

/** `secretstore-iac narrow [SOURCE] --log FILE... | --usage FILE`: the usage report turned into the configuration change that removes what was not used. */
export const narrowCommand: Command = {
  name: 'narrow',
  summary: 'the configuration change that removes the grants the audit log shows unused in the window, with its evidence for the merge request',
  usage: [
    'Usage: secretstore-iac narrow [SOURCE] (--log FILE... [--since TIME] [--until TIME] | --usage FILE)',
    '                              [--keep FIELD|IDENTITY...] [--retire-idle] [--config FILE] [--markdown FILE] [--patch FILE] [--write]',
    '',
    'Reads the same inputs as `usage` (the audit log, or its usage file) against the configuration applied',
    '(SOURCE), and lists per declaration what to remove: the PlatformConfig field and its new value',
    '(accounts.<name>.readByCi: true -> false, people.groups.<name>.reads[<i>] removed), or, for the spec\'s',
    'own declarations, why no field changes them; each with its evidence (never used in the window, the',
    "identity's logins and requests, last seen). Roles with no login in the window are listed, not edited,",
    'unless --retire-idle: then the application (applications.<id>) or people group (people.groups.<name>)',
    'declaring each is removed (its role, policy and Secret IDs go with the apply).',
    'The edits are made on the object literal typed PlatformConfig of --config with the TypeScript compiler',
    'API, formatting kept; a field behind a spread, a variable or a computed value is listed for a person',
    'to change, never half-edited. Without --write, prints what it would change.',
    '',
    SOURCE_HELP,
    `SOURCE defaults to ${DEFAULT_SOURCE}.`,
    '',
    '  --log FILE          an audit log file (repeat for rotated files; .gz or not)',
    ...AUDIT_WINDOW_HELP,
    '  --usage FILE        a usage file (`secretstore-iac usage --format json`) instead of --log',
    '  --keep VALUE        keep a grant regardless: a field (accounts.mirror, people.groups.ops.reads[1]),',
    '                      a construct path or an identity (oidc/ops); repeatable',
    '  --retire-idle       also remove the applications and people groups whose role never logged in in the window',
    `  --config FILE       the configuration source to edit (default ${PLATFORM_CONFIG_SOURCE})`,
    '  --markdown FILE     also write the merge request\'s description, with the evidence',
    '  --patch FILE        also write the edits as a patch of --config (`git apply FILE`), --config unchanged without --write',
    '  --write             write the edits to --config (default: print what would change)',
    '',
    'Exit codes: 0 narrowing listed (and written with --write); 2 usage error; 3 runtime error (a log',
    'or usage file that is not one, a configuration that cannot be read, a --config with no PlatformConfig literal).',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(
      args,
      {
        log: { type: 'string', multiple: true },
        ...AUDIT_WINDOW_OPTIONS,
        usage: { type: 'string' },
        keep: { type: 'string', multiple: true },
        'retire-idle': { type: 'boolean' },
        config: { type: 'string' },
        markdown: { type: 'string' },
        patch: { type: 'string' },
        write: { type: 'boolean' },
      },
      { min: 0, max: 1, names: 'at most one SOURCE' },
    );
    const logs = (values.log as string[] | undefined) ?? [];
    const usageFile = values.usage as string | undefined;
    const keep = (values.keep as string[] | undefined) ?? [];
    const now = Date.now();
    const [files, window, , configFile, markdownFile, patchFile] = allProblems(
      () => (usageFile === undefined ? auditLogFiles(logs, context.cwd, '--log') : []),
      () => {
        if (usageFile !== undefined && (values.since !== undefined || values.until !== undefined)) throw new UsageError('--since / --until go with --log: a usage file carries its own window');
        return auditWindowOption(values, now);
      },
      () => {
        if (logs.length === 0 && usageFile === undefined) throw new UsageError('--log FILE or --usage FILE is required: the audit log, or the usage file `secretstore-iac usage --format json` wrote');
        if (logs.length > 0 && usageFile !== undefined) throw new UsageError('--log and --usage are two sources of the same report: give one');
        const empty = keep.filter((k) => k.trim() === '');
        if (empty.length > 0) throw new UsageError('--keep "": an empty value keeps nothing; give a field (accounts.mirror), a construct path or an identity (oidc/ops)');
      },
      () => inputFilePath({ option: '--config', given: (values.config as string | undefined) ?? PLATFORM_CONFIG_SOURCE, what: `the configuration source holding the PlatformConfig object (${PLATFORM_CONFIG_SOURCE})` }, context.cwd),
      () => (values.markdown === undefined ? undefined : outputFilePath('--markdown', values.markdown as string, context.cwd)),
      () => (values.patch === undefined ? undefined : outputFilePath('--patch', values.patch as string, context.cwd)),
    );
    const { configuration } = await loadConfiguration(positionals[0] ?? DEFAULT_SOURCE, context);
    let report: UsageReport;
    if (usageFile !== undefined) {
      report = readUsageFileOption(usageFile, context.cwd);
    } else {
      const model = await AccessModel.load(configuration);
      const namespace = resolveStoreNamespace(context.env, configuration.namespaces ?? ['']);
      report = await usageOfAuditLog(files, window, model, configuration, { namespace: namespace ?? '' });
    }
    const { narrowing, unmatchedKeeps } = narrowingOf(report, keep, { retireIdle: values['retire-idle'] === true });
    if (unmatchedKeeps.length > 0) {
      throw new UsageError(unmatchedKeeps.map((k) => `--keep ${k}: names no grant the narrowing removes (a field such as accounts.mirror, a construct path, or an identity such as oidc/ops)`).join('; '));
    }
    const source = fs.readFileSync(configFile, 'utf8');
    const shown = path.relative(context.cwd, configFile) || configFile;
    const edits = editedItems(narrowing).map((i) => i.edit!);
    // Loaded here, not at the top: the TypeScript compiler is large, and every other command (each
    // pipeline job's start) would pay for loading it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    let editPlatformConfig: typeof EditPlatformConfig;
    try {
      ({ editPlatformConfig } = require('../usage/platform-config-edit') as { editPlatformConfig: typeof EditPlatformConfig });
    } catch {
      throw new UsageError('narrow reads stacks/platform.config.ts with the TypeScript compiler, which this repository does not have installed: run `npm ci` (a configuration repository made by `secretstore-iac init` lists typescript among its devDependencies)');
    }
    const result = editPlatformConfig(source, edits, shown);
    const write = values.write === true;
    if (write && result.applied.length > 0) writeOutputFile('--config', configFile, result.text);
    const outcome = { file: shown, written: write, applied: result.applied.map((e) => JSON.stringify(e)), unsupported: result.unsupported };
    context.stdout(renderNarrowingText(narrowing, outcome));
    if (markdownFile !== undefined) writeOutputFile('--markdown', markdownFile, renderNarrowingMarkdown(narrowing, outcome));
    // The path as the repository names it (the working directory is its root in a pipeline job), with `/` on every system.
    if (patchFile !== undefined) writeOutputFile('--patch', patchFile, configurationPatch(shown.split(path.sep).join('/'), source, result.text));
    return ExitCode.ok;
  },
};
