import { readDeclaredKvMounts } from '../reconcile/declared-kv-mount';
import { readDeclaredObjects } from '../reconcile/declared-object';
import { renderDriftMarkdown } from '../reconcile/drift-markdown';
import { readerPolicy } from '../reconcile/live-store-reader';
import { StoreTarget } from '../model/store-target';
import * as fs from 'fs';
import * as path from 'path';
import { readStoreConfiguration } from '../access/store-configuration';
import { detectDrift } from '../reconcile/store-drift';
import { Command, CommandContext } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { guardKvMounts } from '../engine/kv-mount-guard';
import { readSynthOutput } from '../sources/synth-output';
import { liveStoreClient, readLiveStoreFromEnvironment } from './live-source';
import { DEFAULT_SOURCE, SOURCE_HELP, openSourceArgument } from './source-argument';
import { highlightMarkdown, stylingEnabled } from './terminal-highlight';
import { terminalJson, terminalText } from '../private/terminal-text';
import { UsageError } from './usage-error';

/** `secretstore-iac drift [SOURCE] [--stack S]`: the live store compared with the declarations. */
export const driftCommand: Command = {
  name: 'drift',
  summary: 'compare the live store with the declarations: changed or missing objects, unmanaged roles and policies',
  usage: [
    'Usage: secretstore-iac drift [SOURCE] [--stack STACK] [--format md|json] [--print-reader-policy]',
    '',
    'Reads the live store (SECRETSTORE_ADDR / VAULT_ADDR, token from VAULT_TOKEN; read and list only)',
    'and reports (1) declared objects missing from the store or whose live value differs: auth',
    'mounts, JWT configuration, role fields (audiences, bound claims, TTLs, policies), policy texts',
    'with the access each change gives; (2) a changed built-in `default` policy; (3) without',
    '--stack, roles and policies on the store that no stack declares, with the access they give',
    '(sudo and wildcard paths named). Built-in policies (root, default, response-wrapping) are',
    'never unmanaged. Nothing is written to the store.',
    '',
    'First it compares each KV mount the stacks rely on (recorded by the synthesis) with the store',
    '(GET sys/mounts): another KV version or engine type, a path inside another mount, or no mount at',
    'all stops it with exit 5 and the contradictions, before any report.',
    '',
    SOURCE_HELP,
    `SOURCE defaults to ${DEFAULT_SOURCE}.`,
    '',
    '  --stack STACK            only the objects of this stack (no unmanaged-object report)',
    '  --format md|json         Markdown (default) or JSON',
    '  --print-reader-policy    print the least-privilege ACL policy the reader needs, and exit: written',
    '                           for the store SOURCE targets (settings.store); for any store version',
    '                           when SOURCE names none or, not given, cdktf.out does not exist',
    '',
    'Exit codes: 0 in sync, 1 drift found, 2 usage error, 3 cannot read the store or the declarations,',
    '5 a declared KV mount does not match the store.',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(
      args,
      { stack: { type: 'string' }, format: { type: 'string' }, 'print-reader-policy': { type: 'boolean' } },
      { min: 0, max: 1, names: 'at most one SOURCE' },
    );
    if (values['print-reader-policy'] === true) {
      context.stdout(readerPolicy(await recordedStoreTarget(positionals[0], context)).trimEnd());
      return ExitCode.ok;
    }
    const format = formatOption(values.format, ['md', 'json'] as const, 'md');
    const stack = values.stack as string | undefined;
    const source = await openSourceArgument(positionals[0] ?? DEFAULT_SOURCE, context);
    let declared;
    let configuration;
    let kvMounts;
    let namespaces;
    try {
      declared = readDeclaredObjects(source.dir);
      const stacks = [...new Set(declared.map((o) => o.stack))];
      if (stack !== undefined && !stacks.includes(stack)) throw new UsageError(`--stack ${stack}: no such stack with store objects; there are ${stacks.join(', ')}`);
      configuration = readStoreConfiguration(source.dir);
      kvMounts = readDeclaredKvMounts(source.dir, stack === undefined ? undefined : [stack]);
      // The namespace the stacks were applied to is the one to read (or VAULT_NAMESPACE, if it agrees).
      namespaces = readSynthOutput(source.dir).filter((s) => stack === undefined || s.name === stack).map((s) => s.namespace);
    } finally {
      source.dispose();
    }
    if (!(await guardKvMounts('drift', liveStoreClient(context, namespaces), kvMounts, (l) => context.stderr(l)))) return ExitCode.kvMountMismatch;
    const live = await readLiveStoreFromEnvironment(context, namespaces);
    const report = await detectDrift(declared, configuration, live, { stack });
    // The report quotes the store's text: escaped before the library adds its own styling.
    if (format === 'json') context.stdout(terminalJson(report));
    else context.stdout(highlightMarkdown(terminalText(renderDriftMarkdown(report, live.address).trimEnd()), stylingEnabled(context.isTerminal, context.env)));
    return report.findings.length > 0 ? ExitCode.drift : ExitCode.ok;
  },
};

/**
 * The store the synthesized SOURCE targets (`settings.store`, recorded in its stacks), for the reader
 * policy: undefined when it records none, or when SOURCE is not given and `cdktf.out` does not exist
 * or cannot be read (the policy is then written for either store version, which is always correct).
 */
async function recordedStoreTarget(argument: string | undefined, context: CommandContext): Promise<StoreTarget | undefined> {
  if (argument === undefined && !fs.existsSync(path.resolve(context.cwd, DEFAULT_SOURCE))) return undefined;
  let source;
  try {
    source = await openSourceArgument(argument ?? DEFAULT_SOURCE, context);
    return readStoreConfiguration(source.dir).store;
  } catch (e) {
    if (argument === undefined) return undefined;
    throw e;
  } finally {
    source?.dispose();
  }
}
