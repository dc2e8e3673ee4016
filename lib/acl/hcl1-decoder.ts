import { Hcl1Item, Hcl1Node, Hcl1ObjectList, Hcl1SyntaxError, goParseInt, isHcl1Json, keyValue, parseHcl1, tokenValue } from './hcl1-syntax';
import { PolicyItem, PolicyValue } from './policy-item';
import { StoreKind } from '../model/store-target';

/**
 * What the stores' `hcl.DecodeObject` makes of a parsed policy (`decoder.go` of `hashicorp/hcl`
 * v1, into the `Policy` and `PathRules` structs of each store's `vault/policy.go`), as the items
 * {@link decodePolicy} validates: `name` as the string field it is decoded into, every `path` body
 * with each key's value decoded into its field's Go type.
 *
 * How a key given more than once is merged is the decoder's, field by field, and the stores really
 * do it so (checked on both by test/store/acl-differential.store.test.ts): list fields
 * (`capabilities`, `required_parameters`, ...) are concatenated, parameter maps merged (a parameter
 * given twice has both value lists), string and number fields take the last value. OpenBao's parser
 * and every JSON text keep duplicates; Vault 1.21's HCL parser refuses an attribute set twice.
 */

/** Go kinds of the struct fields a policy key is decoded into. */
type FieldKind = 'string' | 'int' | 'interface' | 'strings' | 'parameters' | 'controlGroup';

/** `PathRules` fields by key, per store (`vault/policy.go`); keys without a field (`comment`) are not decoded. */
const PATH_FIELDS: Readonly<Record<StoreKind, Readonly<Record<string, FieldKind>>>> = {
  openbao: {
    policy: 'string',
    capabilities: 'strings',
    expiration: 'string',
    min_wrapping_ttl: 'interface',
    max_wrapping_ttl: 'interface',
    allowed_parameters: 'parameters',
    denied_parameters: 'parameters',
    required_parameters: 'strings',
    mfa_methods: 'strings',
    pagination_limit: 'int',
    list_scan_response_keys_filter_path: 'string',
  },
  vault: {
    policy: 'string',
    capabilities: 'strings',
    min_wrapping_ttl: 'interface',
    max_wrapping_ttl: 'interface',
    allowed_parameters: 'parameters',
    denied_parameters: 'parameters',
    required_parameters: 'strings',
    mfa_methods: 'strings',
    control_group: 'controlGroup',
    subscribe_event_types: 'strings',
  },
};

/** A decoding error of the store's decoder (it refuses the policy). */
class DecodeError extends Hcl1SyntaxError {}

const fail = (field: string, why: string): never => {
  throw new DecodeError(`${field}: ${why}`);
};

/** A value decoded into a Go `interface{}`, with the Go kind a second decoding dispatches on. */
interface Dynamic {
  readonly kind: 'string' | 'int' | 'float' | 'bool' | 'other';
  readonly value: PolicyValue;
}

/** `ObjectType` values are decoded as their object list (decodeStruct does this for every match). */
function asList(node: Hcl1Node): Hcl1Node {
  return node.kind === 'object' ? node.list : node;
}

/** `ObjectList.Filter(key)`: the items whose first key is `key` (Go's `EqualFold`), that key removed. */
function filter(list: Hcl1ObjectList, key: string): Hcl1ObjectList {
  const folded = key.toLowerCase();
  return {
    kind: 'objectList',
    items: list.items
      .filter((item) => item.keys.length > 0 && (keyValue(item.keys[0]) === key || keyValue(item.keys[0]).toLowerCase() === folded))
      .map((item) => ({ ...item, keys: item.keys.slice(1) })),
  };
}

/** decodeString: a number's text, a string's or heredoc's value. */
function decodeString(field: string, node: Hcl1Node): string {
  if (node.kind === 'literal') {
    if (node.token.type === 'NUMBER') return node.token.text;
    if (node.token.type === 'STRING' || node.token.type === 'HEREDOC') return String(tokenValue(node.token));
  }
  return fail(field, `unknown type for string ${node.kind}`);
}

/** decodeInt: `strconv.ParseInt(text, 0, 0)` of a number or a string. */
function decodeInt(field: string, node: Hcl1Node): number {
  if (node.kind === 'literal' && (node.token.type === 'NUMBER' || node.token.type === 'STRING')) {
    const text = node.token.type === 'NUMBER' ? node.token.text : String(tokenValue(node.token));
    const value = goParseInt(text);
    if (value === undefined) fail(field, `invalid integer ${JSON.stringify(text)}`);
    return value!;
  }
  return fail(field, `unknown type ${node.kind}`);
}

/** decodeSlice into `[]string`, appended to what is there. */
function decodeStrings(field: string, existing: readonly string[], node: Hcl1Node): string[] {
  const n = asList(node);
  const items: Hcl1Node[] = n.kind === 'objectList' ? n.items : n.kind === 'list' ? n.items : [];
  if (n.kind === 'literal') fail(field, 'unknown slice type: a single value, not a list');
  return [...existing, ...items.map((item, i) => decodeString(`${field}[${i}]`, item))];
}

/**
 * decodeInterface: a literal as its Go type; lists and objects as lists and maps (`within slice`:
 * an object directly inside a list is a map, elsewhere a list of maps, as in Go).
 */
function decodeDynamic(field: string, node: Hcl1Node, withinSlice: boolean, existing?: Dynamic): Dynamic {
  if (existing && existing.kind !== 'other') {
    // A second value decoded into the same interface: Go dispatches on the kind already there.
    if (existing.kind === 'string') return { kind: 'string', value: decodeString(field, node) };
    if (existing.kind === 'int') return { kind: 'int', value: decodeInt(field, node) };
    if (existing.kind === 'bool') {
      if (node.kind === 'literal' && node.token.type === 'BOOL') return { kind: 'bool', value: node.token.text === 'true' };
      return fail(field, `unknown type ${node.kind}`);
    }
    if (node.kind === 'literal' && (node.token.type === 'FLOAT' || node.token.type === 'NUMBER')) return { kind: 'float', value: Number(node.token.text) };
    return fail(field, `unknown type ${node.kind}`);
  }
  switch (node.kind) {
    case 'literal':
      switch (node.token.type) {
        case 'BOOL':
          return { kind: 'bool', value: node.token.text === 'true' };
        case 'FLOAT':
          return { kind: 'float', value: Number(tokenValue(node.token)) };
        case 'NUMBER':
          return { kind: 'int', value: decodeInt(field, node) };
        default:
          return { kind: 'string', value: String(tokenValue(node.token)) };
      }
    case 'list':
      return { kind: 'other', value: node.items.map((e, i) => decodeDynamic(`${field}[${i}]`, e, true).value) };
    case 'object':
    case 'objectList': {
      const list = asList(node) as Hcl1ObjectList;
      if (withinSlice) return { kind: 'other', value: decodeMap(field, list, {}, (f, v, old) => decodeDynamic(f, v, false, old === undefined ? undefined : dynamicOf(old)).value) };
      // []map[string]interface{}: each item of the list decoded as a map.
      return { kind: 'other', value: list.items.map((item, i) => decodeMap(`${field}[${i}]`, { kind: 'objectList', items: [item] }, {}, (f, v) => decodeDynamic(f, v, false).value)) };
    }
    default:
      return fail(field, 'cannot decode into interface: *ast.ObjectItem');
  }
}

/**
 * decodeMap: each item's first key names an entry, decoded into what the entry holds already;
 * an item with more keys takes all items of that key (`Filter`), once.
 */
function decodeMap<T extends PolicyValue>(
  field: string,
  node: Hcl1Node,
  existing: Readonly<Record<string, T>>,
  decodeEntry: (field: string, value: Hcl1Node, old: T | undefined) => T,
): Record<string, T> {
  const n = asList(node);
  if (n.kind !== 'objectList') return fail(field, `not an object type for map (${n.kind})`);
  const out: Record<string, T> = { ...existing };
  const done = new Set<string>();
  for (const item of n.items) {
    if (item.keys.length === 0) fail(field, 'map must have string keys');
    const key = keyValue(item.keys[0]);
    if (done.has(key)) continue;
    let value: Hcl1Node = item.value;
    if (item.keys.length > 1) {
      value = filter(n, key);
      done.add(key);
    }
    out[key] = decodeEntry(`${field}.${key}`, value, Object.prototype.hasOwnProperty.call(out, key) ? out[key] : undefined);
  }
  return out;
}

/** decodeSlice into `[]interface{}` (a parameter's values), appended to what is there. */
function decodeValues(field: string, node: Hcl1Node, existing: readonly PolicyValue[] = []): PolicyValue[] {
  const items: Hcl1Node[] = node.kind === 'objectList' ? node.items : node.kind === 'object' ? [node] : node.kind === 'list' ? node.items : [];
  if (node.kind === 'literal') fail(field, 'unknown slice type: a single value, not a list');
  return [...existing, ...items.map((item, i) => decodeDynamic(`${field}[${i}]`, item, true).value)];
}

/**
 * decodeStruct: for each field, the items of its key (Go matches keys with `EqualFold`): first
 * those with more keys, as one list, then each value in order, all decoded into the same field.
 */
function decodeStruct(field: string, node: Hcl1Node, fields: Readonly<Record<string, (f: string, value: Hcl1Node, old: PolicyValue | undefined) => PolicyValue>>, existing: Record<string, PolicyValue> = {}): Record<string, PolicyValue> {
  const list = asList(node);
  if (list.kind !== 'objectList') return fail(field, `not an object type for struct (${list.kind})`);
  const out: Record<string, PolicyValue> = { ...existing };
  for (const [key, decode] of Object.entries(fields)) {
    const matched = filter(list, key);
    const prefix = matched.items.filter((i) => i.keys.length > 0);
    const exact = matched.items.filter((i) => i.keys.length === 0);
    if (prefix.length > 0) out[key] = decode(`${field}.${key}`, { kind: 'objectList', items: prefix }, out[key]);
    for (const item of exact) out[key] = decode(`${field}.${key}`, asList(item.value), out[key]);
  }
  return out;
}

const strings = (f: string, v: Hcl1Node, old: PolicyValue | undefined) => decodeStrings(f, (old as string[] | undefined) ?? [], v);

/** Vault's `ControlGroupHCL`, `ControlGroupFactor` and `IdentityFactor` (pointers decode into what is there). */
function decodeControlGroup(field: string, node: Hcl1Node, old: PolicyValue | undefined): PolicyValue {
  const asRecord = (value: PolicyValue | undefined) => (value as Record<string, PolicyValue> | undefined) ?? {};
  const factor = (f: string, v: Hcl1Node, prev: PolicyValue | undefined): PolicyValue =>
    decodeStruct(
      f,
      v,
      {
        name: (nf, nv) => decodeString(nf, nv),
        identity: (idf, idv, idPrev) => decodeStruct(idf, idv, { group_ids: strings, group_names: strings, approvals: (af, av) => decodeInt(af, av) }, asRecord(idPrev)),
        controlled_capabilities: strings,
      },
      asRecord(prev),
    );
  return decodeStruct(
    field,
    node,
    {
      ttl: (f, v, prev) => decodeDynamic(f, v, false, prev === undefined ? undefined : dynamicOf(prev)).value,
      factor: (f, v, prev) => decodeMap(f, v, asRecord(prev), factor),
    },
    asRecord(old),
  );
}

/** The decoder of one `PathRules` field kind. */
function fieldDecoder(kind: FieldKind): (field: string, value: Hcl1Node, old: PolicyValue | undefined) => PolicyValue {
  switch (kind) {
    case 'string':
      return (f, v) => decodeString(f, v);
    case 'int':
      return (f, v) => decodeInt(f, v);
    case 'strings':
      return strings;
    case 'parameters':
      return (f, v, old) => decodeMap(f, v, (old as Record<string, PolicyValue[]> | undefined) ?? {}, (pf, pv, pold) => decodeValues(pf, pv, pold));
    case 'controlGroup':
      return decodeControlGroup;
    case 'interface': {
      return (f, v, old) => decodeDynamic(f, v, false, old === undefined ? undefined : dynamicOf(old)).value;
    }
  }
}

/** The Go kind of a value already decoded into an interface. */
function dynamicOf(value: PolicyValue): Dynamic {
  if (typeof value === 'string') return { kind: 'string', value };
  if (typeof value === 'boolean') return { kind: 'bool', value };
  if (typeof value === 'number') return { kind: Number.isInteger(value) ? 'int' : 'float', value };
  return { kind: 'other', value };
}

/** A value the store never decodes (an unknown key, `comment`), kept so the key is seen. */
function raw(node: Hcl1Node): PolicyValue {
  switch (node.kind) {
    case 'literal':
      return node.token.type === 'NUMBER' || node.token.type === 'FLOAT' ? Number(node.token.text) : node.token.type === 'BOOL' ? node.token.text === 'true' : node.token.text;
    case 'list':
      return node.items.map(raw);
    case 'object':
      return raw(node.list);
    case 'objectList':
      return Object.fromEntries(node.items.map((i) => [i.keys.map((k) => k.text).join(' '), raw(i.value)]));
    case 'item':
      return raw(node.value);
  }
}

/** One `path` item's body: CheckHCLKeys needs an object; the known keys decoded, the others kept as written. */
function pathBody(key: string, item: Hcl1Item, kind: StoreKind): PolicyValue {
  const body = asList(item.value);
  // Not an object: the store's key check fails on it ("the rule must be a block").
  if (body.kind !== 'objectList') return raw(body);
  const fields = PATH_FIELDS[kind];
  const decoders = Object.fromEntries(Object.entries(fields).map(([k, fk]) => [k, fieldDecoder(fk)]));
  const decoded = decodeStruct(`path "${key}"`, body, decoders);
  const out: Record<string, PolicyValue> = {};
  for (const entry of body.items) {
    const first = keyValue(entry.keys[0]);
    if (first in out) continue;
    out[first] = first in decoded ? decoded[first] : raw(entry.value);
  }
  return out;
}

/**
 * Parses and decodes a policy text as the given store does (`hcl.Parse`, then `hcl.DecodeObject`
 * of `vault/policy.go`) into the items {@link decodePolicy} validates.
 * @param keepDuplicates read an attribute given twice as OpenBao does, also for Vault (Vault 1.21
 *   does so only with `VAULT_ALLOW_PENDING_REMOVAL_DUPLICATE_HCL_ATTRIBUTES` set)
 * @throws Error naming the policy, for a text the store's parser or decoder refuses
 */
export function hcl1PolicyItems(name: string, text: string, kind: StoreKind, keepDuplicates = false): PolicyItem[] {
  try {
    const root = parseHcl1(text, kind === 'vault' && !keepDuplicates);
    const items: PolicyItem[] = [];
    for (const item of root.items) {
      const keys = item.keys.map(keyValue);
      if (keys[0] === 'name') {
        // The Policy struct's `name` string field: a number's text or a string; anything else,
        // and `name "x" { }`, is refused.
        const value = asList(item.value);
        const decodable = keys.length === 1 && value.kind === 'literal' && ['NUMBER', 'STRING', 'HEREDOC'].includes(value.token.type);
        if (!decodable) {
          const what = keys.length > 1 || value.kind === 'objectList' ? 'a block' : value.kind === 'list' ? 'a list' : value.kind === 'literal' ? value.token.text : 'a block';
          throw new DecodeError(`"name" must be a string, not ${what}`);
        }
        items.push({ keys: ['name'], value: decodeString('name', value) });
      } else if (keys[0] === 'path') {
        const key = keys[1] ?? 'path';
        items.push({ keys, value: pathBody(key, item, kind) });
      } else {
        items.push({ keys, value: raw(item.value) });
      }
    }
    return items;
  } catch (e) {
    if (e instanceof Hcl1SyntaxError) {
      const syntax = isHcl1Json(text) ? 'not valid JSON: ' : 'not valid HCL: ';
      throw new Error(`policy "${name}": ${e instanceof DecodeError ? '' : syntax}${e.message}`);
    }
    throw e;
  }
}
