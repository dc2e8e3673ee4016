import * as fs from 'fs';
import * as path from 'path';
import { canonicalJson } from '../access/access-change-record';
import { SYNTHESIZED_STACK_FILE } from './bookkeeping-seal';

/** The engine's data directory in a stack directory (`init` writes it). */
export const ENGINE_DATA_DIR = '.terraform';

/** The backend record `init` writes in {@link ENGINE_DATA_DIR}: the backend's type and configuration the engine uses. */
export const BACKEND_RECORD = 'terraform.tfstate';

/** The workspace record `workspace select` writes in {@link ENGINE_DATA_DIR}. */
export const WORKSPACE_RECORD = 'environment';

/**
 * The files of {@link ENGINE_DATA_DIR} that choose what the engine reads beside its configuration
 * (which state, through which backend): copied into an engine run's fresh directory and checked
 * there ({@link engineRecordProblems}), never linked.
 */
export const COPIED_ENGINE_RECORDS: ReadonlySet<string> = new Set([BACKEND_RECORD, WORKSPACE_RECORD]);

/**
 * What `.terraform/` may hold (an allowlist): the two records and the installed providers and modules
 * (checked against the tool's mirror: lib/engine/installed-providers.ts). Anything else is refused,
 * `plugin_path` first among them (`init -plugin-dir` records it and every later `init` installs from
 * there: seen on Terraform 1.11.4).
 */
const ENGINE_DATA_ENTRIES: ReadonlySet<string> = new Set([...COPIED_ENGINE_RECORDS, 'providers', 'modules']);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What the engine's records in `dir/.terraform/` make it read that the configuration in
 * `dir/cdk.tf.json` does not say, one line each with the fix:
 * - an entry `init` does not write from the tool's mirror ({@link ENGINE_DATA_ENTRIES});
 * - a workspace other than `default` selected (`environment`): another state than the one the
 *   guards and `drift` read;
 * - a backend record (`terraform.tfstate`) of the declared backend's type whose configuration is not
 *   the declared block's, attribute by attribute (unset: `null`). While the block's hash is the one
 *   recorded, both engines use the recorded configuration and not the block (an `init
 *   -backend-config=...`, or a record written by hand: another state file, database or schema than
 *   the synthesized one, so no shared lock). Values are never printed (a connection string may
 *   hold a password): the attribute is named.
 * A record of another type, or a configuration without a backend under a record, is the engine's
 * own refusal (it asks for `init`); an unreadable record is named.
 */
export function engineRecordProblems(dir: string): string[] {
  const problems: string[] = [];
  const records = path.join(dir, ENGINE_DATA_DIR);
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(records).sort();
  } catch {
    // No .terraform/ (yet): `init` writes it.
  }
  for (const name of entries.filter((n) => !ENGINE_DATA_ENTRIES.has(n))) {
    problems.push(
      `.terraform/${name}: not what \`init\` writes from the tool's mirror (${name === 'plugin_path' ? 'the record of `init -plugin-dir`: every later `init` installs providers from there' : 'the engine may read it'}), and no review read it. Fix: remove .terraform/ and run \`secretstore-iac tf STACK -- init\``,
    );
  }
  let workspace: string | undefined;
  try {
    workspace = fs.readFileSync(path.join(records, WORKSPACE_RECORD), 'utf8').trim();
  } catch {
    // No workspace selected: the default one.
  }
  if (workspace !== undefined && workspace !== '' && workspace !== 'default') {
    problems.push(`.terraform/environment selects another workspace than \`default\`: another state than the one the guards and \`drift\` read. Fix: \`secretstore-iac tf STACK -- workspace select default\`, or remove .terraform/environment`);
  }
  let text: string;
  try {
    text = fs.readFileSync(path.join(records, BACKEND_RECORD), 'utf8');
  } catch {
    return problems;
  }
  const fix = 'Fix: remove .terraform/ and run `secretstore-iac tf STACK -- init` (the backend is the one the configuration declares: stacks/*.ts)';
  let recorded: unknown;
  try {
    recorded = JSON.parse(text);
  } catch {
    return [...problems, `.terraform/terraform.tfstate (the engine's backend record) is not JSON: what backend the engine would use cannot be checked. ${fix}`];
  }
  const backend = isRecord(recorded) ? recorded.backend : undefined;
  if (!isRecord(backend) || typeof backend.type !== 'string' || backend.type === '') return problems;
  let declared: Record<string, unknown> | undefined;
  try {
    const document = JSON.parse(fs.readFileSync(path.join(dir, SYNTHESIZED_STACK_FILE), 'utf8'));
    const block = isRecord(document) && isRecord(document.terraform) && isRecord(document.terraform.backend) ? document.terraform.backend[backend.type] : undefined;
    declared = isRecord(block) ? block : undefined;
  } catch {
    return problems;
  }
  if (declared === undefined) return problems;
  const config = isRecord(backend.config) ? backend.config : {};
  const differing = [...new Set([...Object.keys(config), ...Object.keys(declared)])]
    .sort()
    .filter((attribute) => canonicalJson(config[attribute] ?? null) !== canonicalJson(declared![attribute] ?? null));
  if (differing.length > 0) {
    problems.push(
      `.terraform/terraform.tfstate (the engine's backend record) gives the ${JSON.stringify(backend.type)} backend ${differing.map((a) => `\`${a}\``).join(', ')} other than cdk.tf.json declares: the engine would use the record's (another state, with no lock shared with the declared one), which no review read. ${fix}`,
    );
  }
  return problems;
}
