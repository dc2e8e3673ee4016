import { AccessModel } from '../access/access-model';
import { WhoCanAnswer, WhoCanEntry, whoCan, whoCanCapabilities, whoCanNamespace, whoCanRefusal } from '../access/who-can';
import { namespacedLabel } from '../access/namespaced-name';
import { canonicalStoreNamespace, storeNamespaceProblems } from '../model/store-namespace';
import { STORE_KINDS, StoreTarget } from '../model/store-target';
import { StoreCapability } from '../acl/store-capability';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { LIVE_SOURCE, loadConfiguration } from './live-source';
import { DEFAULT_SOURCE, SOURCE_HELP } from './source-argument';
import { terminalJson, terminalLine } from '../private/terminal-text';
import { UsageError } from './usage-error';

/** Each store `who-can` knows the capability words of. */
const STORE_TARGETS: readonly StoreTarget[] = STORE_KINDS.map((kind) => new StoreTarget(kind));

/** `secretstore-iac who-can CAPABILITY PATH [SOURCE]`: the identities that can, and through which rule. */
export const whoCanCommand: Command = {
  name: 'who-can',
  summary: 'the identities that can use a capability on a path, and through which rule',
  usage: [
    'Usage: secretstore-iac who-can CAPABILITY PATH [SOURCE] [--namespace NS] [--format text|json]',
    '',
    'Lists the identities whose tokens may use CAPABILITY (create, read, update, patch, delete,',
    'list, sudo; scan on OpenBao; subscribe, recover on HashiCorp Vault) on the request PATH',
    '(e.g. secret/data/registry/svc-orchestrator), each with the one rule that governs the request',
    'and the policies behind it; then the identities an explicit deny rule stops. The store is the',
    "configuration's settings.store (OpenBao when not given), or the live store's own (sys/seal-status);",
    'a word that store does not know is refused, as the store refuses a policy naming it.',
    '',
    'PATH is answered as the store checks it, with a note saying so: LIST and SCAN paths end in "/"',
    '(the store adds it); a KV path in the other KV version\'s form (secret/a on a version 2 mount,',
    'secret/data/a on a version 1 mount) is answered for the form its mount serves; a root-protected',
    'path (sys/auth/*, ...) also needs sudo. A rule with parameters, wrapping TTLs or other narrowing',
    'keys is marked "constrained"; identities holding a policy that is not fully evaluated are listed',
    'as "may have more access" (docs/access.md).',
    '',
    'Paths and policies are a store namespace\'s own (OpenBao namespaces): PATH is a request made in',
    'the namespace of the configuration (settings.namespace; the live store\'s: VAULT_NAMESPACE). When',
    'the stacks are in several namespaces, --namespace NS says which ("" the root namespace); an',
    'identity of a namespace above it is checked at the path with NS in front, as the store does, and',
    'one of any other namespace cannot act there. Identities of a namespace are shown with it.',
    '',
    SOURCE_HELP,
    `SOURCE defaults to ${DEFAULT_SOURCE}; \`${LIVE_SOURCE}\` reads the live store (VAULT_TOKEN, read/list only).`,
    '',
    '  --namespace NS       the store namespace the request is made in',
    '  --format text|json   plain lines (default) or JSON',
    '',
    'Exit codes: 0 answered (even when nobody can), 2 usage error, 3 runtime error.',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(
      args,
      { format: { type: 'string' }, namespace: { type: 'string' } },
      { min: 2, max: 3, names: 'CAPABILITY, PATH and an optional SOURCE' },
    );
    const format = formatOption(values.format, ['text', 'json'] as const, 'text');
    const [capability, path, sourceArgument] = positionals;
    // A word of neither store is refused before any source is read; one the source's store lacks, after.
    if (STORE_TARGETS.every((t) => whoCanRefusal(capability, t) !== undefined)) {
      const words = STORE_TARGETS.map((t) => `${whoCanCapabilities(t).join(', ')} (${t.productName})`);
      throw new UsageError(`"${capability}" is not a capability: use ${words.join(', or ')}`);
    }
    const source = sourceArgument ?? DEFAULT_SOURCE;
    const { configuration, label, kvMounts } = await loadConfiguration(source, context, { kvMounts: true });
    const target = configuration.store ?? StoreTarget.DEFAULT;
    const refusal = whoCanRefusal(capability, target);
    if (refusal !== undefined) {
      const whence =
        source === LIVE_SOURCE
          ? `${label} is ${target} (sys/seal-status)`
          : configuration.store
            ? `${label} targets ${target} (settings.store)`
            : `${label} names no settings.store, so OpenBao is assumed`;
      throw new UsageError(`${refusal} (${terminalLine(whence)})`);
    }
    const given = values.namespace === undefined ? undefined : canonicalStoreNamespace(String(values.namespace));
    const problems = given === undefined || given === '' ? [] : storeNamespaceProblems('--namespace', given);
    if (problems.length > 0) throw new UsageError(`--namespace "${terminalLine(given!)}" ${problems[0].rule}`);
    const model = await AccessModel.load(configuration);
    let namespace: string;
    try {
      namespace = whoCanNamespace(model, given);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const answered = whoCan(model, capability as StoreCapability, path, { kvMounts, namespace });
    // A live store without a single role was most often read in the wrong namespace: said, not left as "nobody".
    const answer =
      source === LIVE_SOURCE && configuration.identities.length === 0
        ? {
            ...answered,
            notes: [
              ...answered.notes,
              `the ${label} has no JWT, OIDC or AppRole role at all: if the platform's stacks apply in a namespace (settings.namespace), set BAO_NAMESPACE or VAULT_NAMESPACE to it and ask again`,
            ],
          }
        : answered;
    if (format === 'json') {
      context.stdout(terminalJson(answer));
      return ExitCode.ok;
    }
    context.stdout(whoCanText(answer).join('\n'));
    return ExitCode.ok;
  },
};

/** One identity's line: its name, the governing rule, the policies behind it, its constraints. */
function entryLine(e: WhoCanEntry, verb: 'via' | 'by'): string {
  const constrained = e.constraints ? `; constrained: ${terminalLine(e.constraints.join(', '))}` : '';
  // Identities, rules and policies may come from the live store: one escaped line each.
  return `  ${terminalLine(namespacedLabel(e.identity, e.namespace))}  ${verb} "${terminalLine(e.rule)}" (policies: ${terminalLine(e.policies.join(', '))}${constrained})`;
}

/**
 * The text answer: the question, the notes on the path evaluated, the identities that can (each
 * constrained one marked), then those an explicit deny stops, those the store refuses for want of
 * `sudo`, and those holding a policy that is not fully evaluated.
 */
function whoCanText(answer: WhoCanAnswer): string[] {
  const lines = [`${answer.capability} on ${terminalLine(answer.path)}${answer.namespace === undefined ? '' : ` in the namespace ${terminalLine(answer.namespace)}`}:`];
  for (const note of answer.notes) lines.push(`  note: ${terminalLine(note)}`);
  if (answer.allowed.length === 0) lines.push('  nobody');
  for (const e of answer.allowed) lines.push(entryLine(e, 'via'));
  if (answer.denied.length > 0) {
    lines.push('denied by an explicit deny rule:');
    for (const e of answer.denied) lines.push(entryLine(e, 'by'));
  }
  if (answer.needSudo.length > 0) {
    lines.push(`refused: the path needs "sudo" besides "${answer.capability}", which the rule lacks:`);
    for (const e of answer.needSudo) lines.push(entryLine(e, 'via'));
  }
  if (answer.notFullyEvaluated.length > 0) {
    lines.push('may have more access: not fully evaluated:');
    for (const u of answer.notFullyEvaluated) {
      const policies = u.policies.map((p) => `policy "${p.name}": ${p.reasons.join('; ')}`).join('; ');
      lines.push(`  ${terminalLine(namespacedLabel(u.identity, u.namespace))}  (${terminalLine(policies)})`);
    }
  }
  return lines;
}
