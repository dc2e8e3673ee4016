import { PolicyItem, PolicyValue, isPolicyObject } from './policy-item';

/**
 * The HCL parser used for every policy text that is not this library's own output nor JSON: the
 * `@cdktn/hcl2json` package, HashiCorp's HCL implementation compiled to WebAssembly (maintained
 * by the CDK Terrain project).
 *
 * It is loaded on first use only: starting its Go runtime costs ~150 ms, which a run over library
 * policies alone never pays.
 *
 * The store parses policies with HCL 1; this parser is HCL 2. They agree on policy syntax except
 * for constructs HCL 2 refuses and HCL 1 accepts, which are reported as parse errors here (never
 * read differently): `${` or `%{` inside strings, an attribute set twice in one block, several
 * attributes on one line (see docs/access.md).
 */
type Hcl2Json = { parse(filename: string, contents: string): Promise<Record<string, PolicyValue>> };

let parser: Promise<Hcl2Json> | undefined;

/**
 * Parses policy text written in HCL into the store's top-level items.
 * @throws Error naming the policy and the parser's message when the text is not valid HCL
 */
export async function parseHclPolicyText(name: string, text: string): Promise<PolicyItem[]> {
  parser ??= import('@cdktn/hcl2json') as Promise<Hcl2Json>;
  const hcl = await parser;
  let decoded: Record<string, PolicyValue>;
  try {
    decoded = await hcl.parse(`${name}.hcl`, text);
  } catch (e) {
    throw new Error(`policy "${name}": not valid HCL: ${(e as Error).message}`);
  }
  return hcl2Items(decoded);
}

/**
 * Items from the parser's JSON form, where a block is `{ <type>: { <label>: [ <body>, ... ] } }`
 * (a block with several labels nests one object per extra label; the store keeps the first label
 * as the path and ignores the others, and so does this).
 */
export function hcl2Items(decoded: Readonly<Record<string, PolicyValue>>): PolicyItem[] {
  const items: PolicyItem[] = [];
  const blocks = (keys: string[], value: PolicyValue): void => {
    if (Array.isArray(value)) value.forEach((body) => items.push({ keys, value: body }));
    else if (isPolicyObject(value)) Object.entries(value).forEach(([label, inner]) => blocks([...keys, label], inner));
    else items.push({ keys, value });
  };
  for (const [key, value] of Object.entries(decoded)) {
    if (key === 'path' && isPolicyObject(value)) {
      for (const [label, inner] of Object.entries(value)) blocks(['path', label], inner);
    } else if (key === 'path' && Array.isArray(value) && value.length > 0 && value.every(isPolicyObject)) {
      // `path { ... }` without a label: the store's rule for the literal path "path".
      value.forEach((body) => items.push({ keys: ['path'], value: body }));
    } else {
      items.push({ keys: [key], value });
    }
  }
  return items;
}
