/**
 * Policy texts whose reading differs between HCL 1 (the stores), HCL 2, JSON.parse and a naive
 * reading: escapes, duplicate keys, lax syntax, JSON quirks, Unicode. Each entry records what each
 * real store does with it (written with `PUT sys/policies/acl/<name>`: accepted or refused), as
 * test/store/acl-differential.store.test.ts sees it on OpenBao 2.4.0 and Vault 1.21.1; that test
 * holds the record to the store, and both it and test/unit/acl/policy-corpus.test.ts hold the
 * parser to the record. `probe` paths are asked of `sys/capabilities` for a token holding only this
 * policy and compared with the evaluator.
 */
import { StoreKind } from '../../../lib/model/store-target';

/** One corpus entry. */
export interface CorpusText {
  readonly what: string;
  readonly text: string;
  /** What each store does with the text (`PUT sys/policies/acl`). */
  readonly store: Readonly<Record<StoreKind, 'accepted' | 'refused'>>;
  /** Request paths whose capabilities the evaluator must give as the store does. */
  readonly probe?: readonly string[];
  /**
   * Where the parser knowingly accepts or refuses otherwise than this store, and why: the tests
   * assert that the difference is there (so it is never silent, and a fix shows up as a failure).
   */
  readonly knownDifference?: Partial<Readonly<Record<StoreKind, string>>>;
}

const both = (outcome: 'accepted' | 'refused') => ({ openbao: outcome, vault: outcome });
const BOTH_ACCEPT = both('accepted');
const BOTH_REFUSE = both('refused');
/** OpenBao keeps an attribute given twice; Vault 1.21's parser refuses it. */
const DUPLICATE = { openbao: 'accepted', vault: 'refused' } as const;
const rule = (path: string, body: string) => `path ${JSON.stringify(path)} {\n  ${body}\n}\n`;
const read = (path: string) => rule(path, 'capabilities = ["read"]');

/** The corpus, in a fixed order (names `corpus-<index>` on the store). */
export const POLICY_TEXT_CORPUS: readonly CorpusText[] = [
  // Template sequences and escapes inside quoted strings: HCL 1 keeps `${...}`, `$${` and `%{` as written.
  { what: 'a deny on "$${x}" (HCL 2 would read "${x}")', text: `${rule('corpus/data/*', 'capabilities = ["read", "list"]')}${rule('corpus/data/$${x}/*', 'capabilities = ["deny"]')}`, store: BOTH_ACCEPT, probe: ['corpus/data/$${x}/y', 'corpus/data/${x}/y', 'corpus/data/z/y'] },
  { what: '"%%{x}" in a path', text: read('corpus/%%{x}/a'), store: BOTH_ACCEPT, probe: ['corpus/%%{x}/a', 'corpus/%{x}/a'] },
  { what: '"${x}" in a path', text: read('corpus/${x}/a'), store: BOTH_ACCEPT, probe: ['corpus/${x}/a'] },
  { what: '"%{x}" in a path', text: read('corpus/%{x}/a'), store: BOTH_ACCEPT, probe: ['corpus/%{x}/a'] },
  { what: '"${" holding a quote', text: 'path "corpus/${a"b}/c" {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/${a"b}/c'] },
  { what: '"${" spanning a line', text: 'path "corpus/${a\n}/c" {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/${a\n}/c'] },
  { what: 'an unterminated "${"', text: 'path "corpus/${a" {\n  capabilities = ["read"]\n}\n', store: BOTH_REFUSE },
  { what: 'a backslash escape inside "${ }" (kept as written)', text: 'path "corpus/${\\t}/a" {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/${\\t}/a'] },
  { what: '"\\x41" (hex escape)', text: 'path "corpus/\\x41" {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/A', 'corpus/\\x41'] },
  { what: '"\\101" (octal escape)', text: 'path "corpus/\\101b" {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/Ab'] },
  { what: '"\\u00e9"', text: 'path "corpus/caf\\u00e9" {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/café'] },
  { what: '"\\U0001F600"', text: 'path "corpus/\\U0001F600" {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/😀'] },
  { what: '"\\t" in a path', text: 'path "corpus/a\\tb" {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT },
  { what: '"\\a" (bell, unknown to HCL 2)', text: 'path "corpus/a\\ab" {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT },
  { what: '"\\q" (no escape)', text: 'path "corpus/a\\qb" {\n  capabilities = ["read"]\n}\n', store: BOTH_REFUSE },
  { what: '"\\$" (no escape in HCL 1)', text: 'path "corpus/\\${x}" {\n  capabilities = ["read"]\n}\n', store: BOTH_REFUSE },
  { what: '"\\/" (no escape in HCL 1)', text: 'path "corpus\\/a" {\n  capabilities = ["read"]\n}\n', store: BOTH_REFUSE },
  { what: 'a short "\\u12"', text: 'path "corpus/\\u12" {\n  capabilities = ["read"]\n}\n', store: BOTH_REFUSE },
  { what: 'a newline inside a quoted path', text: 'path "corpus/a\nb" {\n  capabilities = ["read"]\n}\n', store: BOTH_REFUSE },
  { what: 'an escaped quote in a path', text: 'path "corpus/a\\"b" {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/a"b'] },
  { what: 'a capability word with an escape ("re\\x61d")', text: rule('corpus/a', 'capabilities = ["re\\x61d"]'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'a "$${" in a capability word', text: rule('corpus/a', 'capabilities = ["$${read}"]'), store: BOTH_REFUSE },
  // Heredocs.
  { what: 'a heredoc capability', text: 'path "corpus/a" {\n  capabilities = [<<EOF\nread\nEOF\n]\n}\n', store: BOTH_REFUSE },
  { what: 'a heredoc legacy policy word', text: 'path "corpus/a" {\n  policy = <<EOF\nread\nEOF\n}\n', store: BOTH_REFUSE },
  { what: 'a heredoc comment', text: 'path "corpus/a" {\n  comment = <<EOF\nanything\nEOF\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'an unterminated heredoc', text: 'path "corpus/a" {\n  comment = <<EOF\nanything\n}\n', store: BOTH_REFUSE },
  // Keys given twice: decoded into the same field.
  { what: 'capabilities twice (HCL)', text: rule('corpus/a', 'capabilities = ["read"]\n  capabilities = ["list"]'), store: DUPLICATE, probe: ['corpus/a'] },
  { what: 'capabilities twice, one quoted key (HCL)', text: rule('corpus/a', 'capabilities = ["read"]\n  "capabilities" = ["list"]'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'capabilities twice (JSON)', text: '{"path": {"corpus/a": {"capabilities": ["read"], "capabilities": ["update"]}}}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'policy twice (HCL)', text: rule('corpus/a', 'policy = "read"\n  policy = "write"'), store: DUPLICATE, probe: ['corpus/a'] },
  { what: 'policy twice (JSON), the last is read', text: '{"path": {"corpus/a": {"policy": "write", "policy": "read"}}}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'capabilities and a legacy policy', text: rule('corpus/a', 'capabilities = ["update"]\n  policy = "read"'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'the same path block twice (HCL)', text: `${read('corpus/a')}${rule('corpus/a', 'capabilities = ["list"]')}`, store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: '"path" twice (JSON), both read', text: '{"path": {"corpus/a": {"capabilities": ["read"]}}, "path": {"corpus/b": {"capabilities": ["list"]}}}', store: BOTH_ACCEPT, probe: ['corpus/a', 'corpus/b'] },
  { what: 'the same path twice in one JSON object', text: '{"path": {"corpus/a": {"capabilities": ["read"]}, "corpus/a": {"capabilities": ["update"]}}}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'a path as a list of objects (JSON)', text: '{"path": [{"corpus/a": {"capabilities": ["read"]}}, {"corpus/a": {"capabilities": ["list"]}}]}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'a deny and a grant on one path, two blocks', text: `${read('corpus/a')}${rule('corpus/a', 'capabilities = ["deny"]')}`, store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'name twice (HCL)', text: `name = "a"\nname = "b"\n${read('corpus/a')}`, store: DUPLICATE },
  { what: 'allowed_parameters twice (HCL)', text: rule('corpus/a', 'capabilities = ["update"]\n  allowed_parameters = { "x" = [] }\n  allowed_parameters = { "y" = [] }'), store: DUPLICATE, probe: ['corpus/a'] },
  { what: 'a parameter given twice in one map', text: rule('corpus/a', 'capabilities = ["update"]\n  allowed_parameters = {\n    "x" = ["a"]\n    "x" = ["b"]\n  }'), store: DUPLICATE, probe: ['corpus/a'] },
  { what: 'min_wrapping_ttl twice, the second not a duration', text: rule('corpus/a', 'capabilities = ["read"]\n  min_wrapping_ttl = "1h"\n  min_wrapping_ttl = "soon"'), store: BOTH_REFUSE },
  { what: 'path = { } given twice (assignment form)', text: 'path = {\n  capabilities = ["read"]\n}\npath = {\n  capabilities = ["list"]\n}\n', store: DUPLICATE, probe: ['path'] },
  // Lax HCL 1 syntax.
  { what: 'several attributes on one line', text: 'path "corpus/a" { capabilities = ["read"] policy = "read" }\n', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'two blocks on one line', text: 'path "corpus/a" { capabilities = ["read"] } path "corpus/b" { capabilities = ["list"] }\n', store: BOTH_ACCEPT, probe: ['corpus/a', 'corpus/b'] },
  { what: 'blocks separated by commas', text: 'path "corpus/a" { capabilities = ["read"] }, path "corpus/b" { capabilities = ["list"] }\n', store: BOTH_ACCEPT, probe: ['corpus/b'] },
  { what: 'a list without commas', text: rule('corpus/a', 'capabilities = ["read" "list"]'), store: BOTH_REFUSE },
  { what: 'a list with leading and doubled commas', text: rule('corpus/a', 'capabilities = [, "read",, "list",]'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'a nested list of capabilities', text: rule('corpus/a', 'capabilities = [["read"]]'), store: BOTH_REFUSE },
  { what: 'capabilities as an empty object', text: rule('corpus/a', 'capabilities = {}'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'capabilities as an object', text: rule('corpus/a', 'capabilities = { read = "x" }'), store: BOTH_REFUSE },
  { what: 'capabilities as a string', text: rule('corpus/a', 'capabilities = "read"'), store: BOTH_REFUSE },
  { what: 'capabilities as an identifier', text: rule('corpus/a', 'capabilities = read'), store: BOTH_REFUSE },
  { what: 'a number in capabilities', text: rule('corpus/a', 'capabilities = ["read", 5]'), store: BOTH_REFUSE },
  { what: 'a boolean in capabilities', text: rule('corpus/a', 'capabilities = [true]'), store: BOTH_REFUSE },
  { what: 'an empty capabilities list', text: rule('corpus/a', 'capabilities = []'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'a quoted key', text: 'path "corpus/a" {\n  "capabilities" = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'a quoted block type', text: '"path" "corpus/a" {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'an identifier as the path label', text: 'path corpus {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus'] },
  { what: 'an identifier label with dots and dashes', text: 'path corpus.a-b {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus.a-b'] },
  { what: 'three labels (the first is the path)', text: 'path "corpus/a" "x" "y" {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'a labelled assignment (path "a" = { })', text: 'path "corpus/a" = {\n  capabilities = ["read"]\n}\n', store: BOTH_REFUSE },
  { what: 'path = { } (the literal path "path")', text: 'path = {\n  capabilities = ["read"]\n}\n', store: BOTH_ACCEPT, probe: ['path'] },
  { what: 'blocks with and without labels', text: `${read('corpus/a')}path {\n  capabilities = ["list"]\n}\n`, store: BOTH_ACCEPT, probe: ['corpus/a', 'path'] },
  { what: 'a nested path block', text: 'path "corpus" {\n  path "a" {\n    capabilities = ["read"]\n  }\n}\n', store: BOTH_REFUSE },
  { what: 'an upper-case block type', text: 'PATH "corpus/a" {\n  capabilities = ["read"]\n}\n', store: BOTH_REFUSE },
  { what: 'an upper-case key', text: rule('corpus/a', 'Capabilities = ["read"]'), store: BOTH_REFUSE },
  { what: 'a missing closing brace', text: 'path "corpus/a" {\n  capabilities = ["read"]\n', store: BOTH_REFUSE },
  { what: 'an extra closing brace', text: `${read('corpus/a')}}\n`, store: BOTH_REFUSE },
  { what: 'a key without value at the end', text: `${read('corpus/a')}path\n`, store: BOTH_REFUSE },
  { what: '"//" and "/* */" comments', text: '// one\n/* two\n three */ path "corpus/a" { # four\n  capabilities = ["read"] // five\n}\n', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'an unterminated block comment', text: `${read('corpus/a')}/* open\n`, store: BOTH_REFUSE },
  { what: 'a single "/"', text: `${read('corpus/a')}/ x\n`, store: BOTH_REFUSE },
  { what: 'Windows line endings', text: 'path "corpus/a" {\r\n  capabilities = ["read"]\r\n}\r\n', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'a carriage return alone between lines', text: 'path "corpus/a" {\r  capabilities = ["read"]\r}\r', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'tabs for indentation', text: 'path\t"corpus/a"\t{\n\tcapabilities\t=\t["read"]\n}\n', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'a byte order mark first', text: `\ufeff${read('corpus/a')}`, store: BOTH_REFUSE },
  { what: 'a no-break space first (HCL)', text: `\u00a0${read('corpus/a')}`, store: BOTH_REFUSE },
  { what: 'a no-break space before "{" (JSON by Go\'s white space, then refused by the JSON scanner)', text: '\u00a0{"path": {"corpus/a": {"capabilities": ["read"]}}}', store: BOTH_REFUSE },
  { what: 'a NUL character', text: `${read('corpus/a')}\u0000`, store: BOTH_REFUSE },
  { what: 'U+E123 (reserved by HCL 1)', text: 'path "corpus/\ue123" {\n  capabilities = ["read"]\n}\n', store: BOTH_REFUSE },
  { what: 'a non-ASCII path', text: read('corpus/données/équipe'), store: BOTH_ACCEPT, probe: ['corpus/données/équipe'] },
  { what: 'a Unicode 16 letter in an identifier key (not a letter to Go 1.26)', text: rule('corpus/a', 'capabilities = ["update"]\n  allowed_parameters = { x\ua7cb = [] }'), store: BOTH_REFUSE },
  { what: 'a Unicode 15 letter in an identifier key', text: rule('corpus/a', 'capabilities = ["update"]\n  allowed_parameters = { xé = [] }'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'a text of one newline', text: '\n', store: BOTH_ACCEPT },
  { what: 'only a comment', text: '# nothing\n', store: BOTH_ACCEPT },
  // Values decoded into each field's Go type.
  { what: 'name = 1.5 (a float is no string)', text: `name = 1.5\n${read('corpus/a')}`, store: BOTH_REFUSE },
  { what: 'name = 0x10', text: `name = 0x10\n${read('corpus/a')}`, store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'name = true', text: `name = true\n${read('corpus/a')}`, store: BOTH_REFUSE },
  { what: 'name "x" { }', text: `name "x" {\n}\n${read('corpus/a')}`, store: BOTH_REFUSE },
  { what: 'policy = 5', text: rule('corpus/a', 'policy = 5'), store: BOTH_REFUSE },
  { what: 'policy = true', text: rule('corpus/a', 'policy = true'), store: BOTH_REFUSE },
  { what: 'comment as an object', text: rule('corpus/a', 'capabilities = ["read"]\n  comment = { any = [1, 2] }'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'min_wrapping_ttl = 1.5', text: rule('corpus/a', 'capabilities = ["read"]\n  min_wrapping_ttl = 1.5'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'min_wrapping_ttl = true', text: rule('corpus/a', 'capabilities = ["read"]\n  min_wrapping_ttl = true'), store: BOTH_REFUSE },
  { what: 'min_wrapping_ttl as a list', text: rule('corpus/a', 'capabilities = ["read"]\n  min_wrapping_ttl = [60]'), store: BOTH_REFUSE },
  { what: 'min_wrapping_ttl = 0x3c', text: rule('corpus/a', 'capabilities = ["read"]\n  min_wrapping_ttl = 0x3c\n  max_wrapping_ttl = 30'), store: BOTH_REFUSE },
  { what: 'max_wrapping_ttl = 1e3', text: rule('corpus/a', 'capabilities = ["read"]\n  max_wrapping_ttl = 1e3'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'required_parameters as a string', text: rule('corpus/a', 'capabilities = ["update"]\n  required_parameters = "x"'), store: BOTH_REFUSE },
  { what: 'required_parameters with a float', text: rule('corpus/a', 'capabilities = ["update"]\n  required_parameters = ["x", 1.5]'), store: BOTH_REFUSE },
  { what: 'required_parameters with a number', text: rule('corpus/a', 'capabilities = ["update"]\n  required_parameters = ["x", 5]'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'allowed_parameters as a list', text: rule('corpus/a', 'capabilities = ["update"]\n  allowed_parameters = ["x"]'), store: BOTH_REFUSE },
  { what: 'a parameter given a single value', text: rule('corpus/a', 'capabilities = ["update"]\n  allowed_parameters = { x = "y" }'), store: BOTH_REFUSE },
  { what: 'a parameter given an object', text: rule('corpus/a', 'capabilities = ["update"]\n  allowed_parameters = { x = { y = 1 } }'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'allowed_parameters as a labelled block', text: rule('corpus/a', 'capabilities = ["update"]\n  allowed_parameters "x" {\n  }'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'a parameter with a label (more keys than one)', text: rule('corpus/a', 'capabilities = ["update"]\n  allowed_parameters {\n    x "y" {\n    }\n  }'), store: BOTH_REFUSE },
  { what: 'denied_parameters with a nested list', text: rule('corpus/a', 'capabilities = ["update"]\n  denied_parameters = { x = [["a"], "b"] }'), store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'pagination_limit = "10" (OpenBao: an integer in a string)', text: rule('corpus/a/', 'capabilities = ["list"]\n  pagination_limit = "10"'), store: { openbao: 'accepted', vault: 'refused' }, probe: ['corpus/a/'] },
  { what: 'pagination_limit = 1.5', text: rule('corpus/a/', 'capabilities = ["list"]\n  pagination_limit = 1.5'), store: BOTH_REFUSE },
  { what: 'pagination_limit = 0x10', text: rule('corpus/a/', 'capabilities = ["list"]\n  pagination_limit = 0x10'), store: { openbao: 'accepted', vault: 'refused' }, probe: ['corpus/a/'] },
  { what: 'expiration = 5 (OpenBao: long passed)', text: rule('corpus/a', 'capabilities = ["read"]\n  expiration = 5'), store: { openbao: 'accepted', vault: 'refused' }, probe: ['corpus/a'] },
  { what: 'expiration = ""', text: rule('corpus/a', 'capabilities = ["read"]\n  expiration = ""'), store: { openbao: 'accepted', vault: 'refused' }, probe: ['corpus/a'] },
  { what: 'control_group as a string', text: rule('corpus/a', 'capabilities = ["read"]\n  control_group = "x"'), store: BOTH_REFUSE },
  { what: 'control_group with an unknown key', text: rule('corpus/a', 'capabilities = ["read"]\n  control_group {\n    other = 1\n    factor "ops" {\n      identity {\n        group_names = ["ops"]\n        approvals = 1\n      }\n    }\n  }'), store: { openbao: 'refused', vault: 'accepted' }, probe: ['corpus/a'] },
  { what: 'control_group approvals as a string', text: rule('corpus/a', 'capabilities = ["read"]\n  control_group {\n    factor "ops" {\n      identity {\n        group_names = ["ops"]\n        approvals = "2"\n      }\n    }\n  }'), store: { openbao: 'refused', vault: 'accepted' }, probe: ['corpus/a'] },
  // JSON as HCL 1 reads it (its own lax parser, not JSON.parse).
  { what: 'JSON without its closing brace', text: '{"path": {"corpus/a": {"capabilities": ["read"]}}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'JSON with a trailing comma', text: '{"path": {"corpus/a": {"capabilities": ["read"],}},}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'JSON with text after it', text: '{"path": {"corpus/a": {"capabilities": ["read"]}}} trailing', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'JSON items without a comma', text: '{"path": {"corpus/a": {"capabilities": ["read"]}} "name": "x"}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'JSON "\\/" escape', text: '{"path": {"corpus\\/a": {"capabilities": ["read"]}}}', store: BOTH_REFUSE },
  { what: 'JSON "\\u00e9"', text: '{"path": {"corpus/caf\\u00e9": {"capabilities": ["read"]}}}', store: BOTH_ACCEPT, probe: ['corpus/café'] },
  { what: 'JSON "\\x41" (a Go escape)', text: '{"path": {"corpus/\\x41": {"capabilities": ["read"]}}}', store: BOTH_ACCEPT, probe: ['corpus/A'] },
  { what: 'JSON "${x}" in a path', text: '{"path": {"corpus/${x}": {"capabilities": ["read"]}}}', store: BOTH_ACCEPT, probe: ['corpus/${x}'] },
  { what: 'JSON "$${x}" in a path', text: '{"path": {"corpus/$${x}": {"capabilities": ["read"]}}}', store: BOTH_ACCEPT, probe: ['corpus/$${x}', 'corpus/${x}'] },
  { what: 'JSON a surrogate pair escape', text: '{"path": {"corpus/\\ud83d\\ude00": {"capabilities": ["read"]}}}', store: BOTH_REFUSE },
  { what: 'JSON true inside capabilities (dropped by HCL 1)', text: '{"path": {"corpus/a": {"capabilities": [true, "read"]}}}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'JSON null capabilities', text: '{"path": {"corpus/a": {"capabilities": null}}}', store: BOTH_REFUSE },
  { what: 'JSON null capability word', text: '{"path": {"corpus/a": {"capabilities": [null]}}}', store: BOTH_REFUSE },
  { what: 'JSON a nested list of capabilities', text: '{"path": {"corpus/a": {"capabilities": [["read"]]}}}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'JSON name = 5.0', text: '{"name": 5.0, "path": {"corpus/a": {"capabilities": ["read"]}}}', store: BOTH_REFUSE },
  { what: 'JSON name = 5', text: '{"name": 5, "path": {"corpus/a": {"capabilities": ["read"]}}}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'JSON a number with a leading zero', text: '{"path": {"corpus/a": {"capabilities": ["read"], "min_wrapping_ttl": 05}}}', store: BOTH_REFUSE },
  { what: 'JSON a comment', text: '{"path": {"corpus/a": {"capabilities": ["read"]}}} // note', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'JSON a body given as a list', text: '{"path": {"corpus/a": [{"capabilities": ["read"]}]}}', store: BOTH_REFUSE },
  { what: 'JSON an empty body', text: '{"path": {"corpus/a": {}}}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'JSON an empty object', text: '{}', store: BOTH_ACCEPT },
  { what: 'JSON cut after the first key (an empty policy to HCL 1)', text: '{"path": ', store: BOTH_ACCEPT },
  { what: 'JSON a value that is no value', text: '{"path": {"corpus/a": ]}}', store: BOTH_REFUSE },
  { what: 'JSON a parameter given an empty object', text: '{"path": {"corpus/a": {"capabilities": ["update"], "allowed_parameters": {"x": {}}}}}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'JSON a parameter map of objects (accepted)', text: '{"path": {"corpus/a": {"allowed_parameters": {"x": {"y": {}}}}}}', store: BOTH_ACCEPT, probe: ['corpus/a'] },
  { what: 'JSON parameters split once too often', text: '{"path": {"corpus/a": {"allowed_parameters": {"x": ["y"]}}}}', store: BOTH_REFUSE },
  { what: 'JSON a control group (flattened into labels, decoded back)', text: '{"path": {"corpus/a": {"capabilities": ["read"], "control_group": {"factor": {"ops": {"identity": {"group_names": ["ops"], "approvals": "2"}}}}}}}', store: { openbao: 'refused', vault: 'accepted' }, probe: ['corpus/a'] },
  { what: 'JSON a control group without approvals', text: '{"path": {"corpus/a": {"capabilities": ["read"], "control_group": {"factor": {"ops": {"identity": {"group_names": ["ops"]}}}}}}}', store: BOTH_REFUSE },
  { what: 'JSON a top-level list (read as HCL)', text: '[{"path": {"corpus/a": {"capabilities": ["read"]}}}]', store: BOTH_REFUSE },
];
