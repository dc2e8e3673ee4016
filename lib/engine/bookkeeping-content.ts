import * as fs from 'fs';
import * as path from 'path';
import { IMPORT_FILE } from '../reconcile/import-blocks';
import { KEPT_ROLE_TYPES, RETIRED_GRANTS_FILE } from '../reconcile/retired-stack-grants';
import { MOVES_FILE } from '../reconcile/stack-moves';
import { readSynthOutput, SynthStack } from '../sources/synth-output';
import { keptRules, literalText, releaseBasis, ResourceBlocks } from './release-basis';

/** The file the synthesis writes into each stack directory (bookkeeping-seal.ts names it too). */
const SYNTHESIZED = 'cdk.tf.json';

/** A resource address as the synthesis writes one: `<type>.<id>`. */
const ADDRESS = /^[a-z][a-z0-9_]*\.[A-Za-z0-9_-]+$/;

/** The attribute moves' override keeps of each resource type: a role's token policies, a policy's text. */
const KEPT_ATTRIBUTE: Readonly<Record<string, string>> = { ...Object.fromEntries(KEPT_ROLE_TYPES.map((t) => [t, 'token_policies'])), vault_policy: 'policy' };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** A JSON file of the stack directory, or why it is not one. */
function readJson(file: string): Record<string, unknown> | string {
  try {
    const value = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
    return isObject(value) ? value : 'not a JSON object';
  } catch (e) {
    return `not JSON (${(e as Error).message})`;
  }
}

/** The resource addresses the stack's synthesis declares (none for a retired stack). */
function declaredAddresses(resources: ResourceBlocks): Set<string> {
  return new Set(Object.entries(resources).flatMap(([type, blocks]) => Object.keys(blocks).map((id) => `${type}.${id}`)));
}

/**
 * What in a moves or adopt file (`moves.tf.json`, `adopt-imports.tf.json`) is not a block the tool
 * derives: only `removed { from, lifecycle { destroy = false } }` of an address the synthesis no
 * longer declares, `import { to, id }` to a declared address with a literal id, and `moved { from,
 * to }` to a declared address; a retired stack's moves file also carries the `terraform` and
 * `provider` blocks, which must be those of a stack of the synthesized output (its backend with that
 * stack's name for the retired one's). Never a `resource`, `data`, `module`, `output`, `locals`, ...
 */
function blockFileProblems(name: string, document: Record<string, unknown>, declared: Set<string>, retired: RetiredSettings | undefined): string[] {
  const problems: string[] = [];
  const allowed = name === IMPORT_FILE ? ['import'] : ['removed', 'import', 'moved', ...(retired !== undefined ? ['terraform', 'provider'] : [])];
  for (const [key, value] of Object.entries(document)) {
    if (key === '//') continue;
    if (!allowed.includes(key)) {
      problems.push(`holds a \`${key}\` block: the tool writes only ${allowed.map((a) => `\`${a}\``).join(', ')} there`);
      continue;
    }
    if (key === 'terraform' || key === 'provider') {
      const why = retired!.check(key, value);
      if (why !== undefined) problems.push(why);
      continue;
    }
    if (!Array.isArray(value)) {
      problems.push(`its \`${key}\` is not a list of blocks`);
      continue;
    }
    value.forEach((block, i) => {
      const at = `${key}[${i}]`;
      const keys = isObject(block) ? Object.keys(block).sort().join(',') : '';
      const b = (isObject(block) ? block : {}) as Record<string, unknown>;
      const address = (v: unknown) => typeof v === 'string' && ADDRESS.test(v);
      if (key === 'removed') {
        if (keys !== 'from,lifecycle' || !address(b.from) || !same(b.lifecycle, [{ destroy: false }])) problems.push(`${at} is not \`removed { from = <address>, lifecycle { destroy = false } }\` as moves writes it`);
        else if (declared.has(b.from as string)) problems.push(`${at} forgets ${b.from as string}, which the synthesis declares`);
      } else if (key === 'import') {
        if (keys !== 'id,to' || !address(b.to) || typeof b.id !== 'string' || literalText(b.id) === undefined) problems.push(`${at} is not \`import { to = <address>, id = <literal> }\` as the tool writes it`);
        else if (!declared.has(b.to as string)) problems.push(`${at} imports to ${b.to as string}, which the synthesis does not declare`);
      } else if (keys !== 'from,to' || !address(b.from) || !address(b.to)) {
        problems.push(`${at} is not \`moved { from = <address>, to = <address> }\` as moves writes it`);
      } else if (!declared.has(b.to as string) || declared.has(b.from as string)) {
        problems.push(`${at} moves ${b.from as string} to ${b.to as string}: the synthesis must declare the second and not the first`);
      }
    });
  }
  return problems;
}

/**
 * The providers a `required_providers` block names, with their sources: the version constraint may
 * differ (BASE may be synthesized by another library version; the lock file decides the binary).
 */
function providerSources(value: unknown): Record<string, unknown> | undefined {
  if (!isObject(value)) return undefined;
  return Object.fromEntries(Object.entries(value).map(([name, p]) => [name, isObject(p) ? p.source : p]));
}

/** How a retired stack's engine settings are checked against the synthesized output's stacks. */
interface RetiredSettings {
  check(key: 'terraform' | 'provider', value: unknown): string | undefined;
}

/**
 * A stack's backend as the stack `to` would have it: its name, and the form a `pg` backend's schema
 * writes it in (`app-roles-01` → `app_roles_01`, postgres-state-backend.ts), replaced by `to`'s.
 */
function renamedBackend(backend: unknown, from: string, to: string): string {
  const schema = (name: string) => name.replace(/-/g, '_');
  return JSON.stringify(backend).split(from).join(to).split(schema(from)).join(schema(to));
}

/**
 * The check of a retired stack's `terraform` and `provider` blocks: the provider must be the one of a
 * stack of the output, `required_providers` too, and the backend that of a stack of the output with
 * that stack's name replaced by the retired one's (its own state); nothing else in `terraform`.
 */
function retiredSettings(stack: string, head: readonly SynthStack[]): RetiredSettings {
  const documents = head.map((s) => ({ name: s.name, document: readJson(s.file) })).filter((d): d is { name: string; document: Record<string, unknown> } => typeof d.document !== 'string');
  return {
    check(key, value) {
      if (key === 'provider') {
        return documents.some((d) => same(d.document.provider, value)) ? undefined : 'its `provider` block is the provider of no stack of the synthesized output';
      }
      if (!isObject(value) || Object.keys(value).some((k) => k !== 'backend' && k !== 'required_providers')) return 'its `terraform` block holds more than `backend` and `required_providers`';
      const matches = documents.some((d) => {
        const t = isObject(d.document.terraform) ? d.document.terraform : {};
        return same(providerSources(t.required_providers), providerSources(value.required_providers)) && renamedBackend(t.backend, d.name, stack) === JSON.stringify(value.backend);
      });
      return matches ? undefined : 'its `terraform` block is not a stack of the synthesized output\'s (the same providers from the same sources, the same backend with this stack\'s name)';
    },
  };
}

/**
 * What in moves' override (`retired-stack-grants_override.tf.json`) is more than keeping retired
 * stacks' grants: only `resource` blocks of objects the stack declares, each setting only the kept
 * attribute (a role's `token_policies`, a policy's `policy`) to the declared value plus retired
 * stacks' grants (names `<pipeline role>-<a stack the output no longer has>`, and rule blocks on
 * their `sys/policies/acl/` paths appended to the declared text); derived from the synthesis.
 */
function keptGrantsProblems(document: Record<string, unknown>, stackDir: string, head: readonly SynthStack[]): string[] {
  const basis = releaseBasis(stackDir, head);
  const problems: string[] = [];
  for (const key of Object.keys(document)) {
    if (key === '//' || key === 'resource') continue;
    problems.push(`holds a \`${key}\` block: moves writes only \`resource\` attributes that keep retired stacks' grants`);
  }
  const resource = document.resource;
  if (!isObject(resource)) return [...problems, 'has no `resource` object'];
  for (const [type, blocks] of Object.entries(resource)) {
    const attribute = KEPT_ATTRIBUTE[type];
    for (const [id, block] of Object.entries(isObject(blocks) ? blocks : {})) {
      const at = `${type}.${id}`;
      const declared = basis.declared[type]?.[id];
      if (attribute === undefined || declared === undefined || !isObject(block) || Object.keys(block).join(',') !== attribute) {
        problems.push(`${at}: moves keeps only ${attribute === undefined ? 'roles\' token_policies and policies\' text' : `\`${attribute}\``} of an object the stack declares`);
        continue;
      }
      const kept = block[attribute];
      const own = declared[attribute];
      if (attribute === 'policy') {
        const rules = typeof kept === 'string' && typeof own === 'string' ? keptRules(kept, own, basis) : 'not a text';
        if (typeof rules === 'string') problems.push(`${at}: policy: ${rules}`);
      } else if (!Array.isArray(kept) || !Array.isArray(own) || !own.every((n) => kept.includes(n)) || !kept.every((n) => own.includes(n) || (typeof n === 'string' && basis.isRetiredGrant(n)))) {
        problems.push(`${at}: token_policies is not the declared list plus retired stacks' grants`);
      }
    }
  }
  return problems;
}

/**
 * What the tool's engine-read bookkeeping in a stack directory holds that the tool does not derive
 * from the synthesis, one line per problem naming the file ({@link blockFileProblems},
 * {@link keptGrantsProblems}). Checked on every engine run whatever the seal says: a seal without a
 * secret is one anyone can compute again, so the content must be what can be derived.
 * @param stackName the stack's name, when `stackDir` is a copy of its directory (an engine run's
 *   fresh working directory, lib/engine/engine-working-directory.ts)
 */
export function bookkeepingContentProblems(stackDir: string, stackName: string = path.basename(stackDir)): string[] {
  const present = [MOVES_FILE, IMPORT_FILE, RETIRED_GRANTS_FILE].filter((n) => fs.existsSync(path.join(stackDir, n)));
  if (present.length === 0) return [];
  const retired = !fs.existsSync(path.join(stackDir, SYNTHESIZED));
  const own = retired ? {} : readJson(path.join(stackDir, SYNTHESIZED));
  if (typeof own === 'string') return [`${SYNTHESIZED}: ${own}: the bookkeeping beside it cannot be checked`];
  let head: readonly SynthStack[] | undefined;
  const output = (): readonly SynthStack[] => (head ??= readSynthOutput(path.dirname(path.dirname(stackDir))));
  const problems: string[] = [];
  for (const name of present) {
    const document = readJson(path.join(stackDir, name));
    const fix = `remove it and run \`secretstore-iac ${name === IMPORT_FILE ? 'adopt STACK' : 'moves BASE HEAD'}\` again`;
    let found: string[];
    try {
      if (typeof document === 'string') found = [document];
      else if (name === RETIRED_GRANTS_FILE) found = retired ? ['a retired stack keeps no grants'] : keptGrantsProblems(document, stackDir, output());
      else found = blockFileProblems(name, document, declaredAddresses((own.resource ?? {}) as ResourceBlocks), retired ? retiredSettings(stackName, output()) : undefined);
    } catch (e) {
      found = [`cannot be checked against the synthesized output (${(e as Error).message})`];
    }
    problems.push(...found.map((p) => `${name}: ${p}: not what \`secretstore-iac\` derives from the synthesis. Fix: ${fix}`));
  }
  return problems;
}
