import { evaluateTemplate } from '../../../lib/sources/terraform-template';

/** What cdktf writes for `Fn.*` of literals (checked against cdktf 0.21's output), and what the engine makes of it. */
describe('Terraform JSON strings evaluated as the engine evaluates them, where the value is known before a plan', () => {
  it.each([
    ['registry-ci', 'registry-ci'],
    ['$${x}', '${x}'],
    ['%%{x}', '%{x}'],
    ['${"registry-ci"}', 'registry-ci'],
    ['${ "registry-ci" }', 'registry-ci'],
    ['a${"b"}c', 'abc'],
    ['${lower("REGISTRY-CI")}', 'registry-ci'],
    ['${upper("x")}-y', 'X-y'],
    ['${trimspace(" x \\n")}', 'x'],
    ['${join("-", ["registry", "ci"])}', 'registry-ci'],
    ['${join("-", ["registry",], ["ci"])}', 'registry-ci'],
    ['${format("%s-ci", "registry")}', 'registry-ci'],
    ['${format("100%%-%s", "x")}', '100%-x'],
    ['${replace("registry_ci", "_", "-")}', 'registry-ci'],
    ['${trimprefix("xregistry-ci", "x")}', 'registry-ci'],
    ['${trimsuffix("registry-ci-", "-")}', 'registry-ci'],
    ['${lower(join("", ["REGISTRY", "-CI"]))}', 'registry-ci'],
    ['${lower("$${x}")}', '${x}'],
    ['${"${"registry"}-ci"}', 'registry-ci'],
    ['${"a\\"b\\\\c\\u0041\\n"}', 'a"b\\cA\n'],
    ['${("x")}', 'x'],
    // The engine's strings are NFC (cty): e + combining acute is é.
    ['e\u0301', '\u00e9'],
  ])('%j is %j', (source, value) => {
    expect(evaluateTemplate(source)).toEqual({ value });
  });

  it('a lone interpolation keeps its value: a tuple stays a tuple', () => {
    expect(evaluateTemplate('${["a", "b"]}')).toEqual({ value: ['a', 'b'] });
  });

  it('references are looked up; an unknown one is unresolved', () => {
    const lookup = (t: string) => (t === 'vault_auth_backend.a.path' ? 'approle' : undefined);
    expect(evaluateTemplate('${vault_auth_backend.a.path}', lookup)).toEqual({ value: 'approle' });
    expect(evaluateTemplate('${lower(vault_auth_backend.a.path)}-x', lookup)).toEqual({ value: 'approle-x' });
    expect(evaluateTemplate('${var.name}', lookup)).toEqual({ unresolved: 'the reference var.name, whose value is known only when the engine plans' });
  });

  it.each([
    ['${var.x}', 'the reference var.x, whose value is known only when the engine plans'],
    ['${title("x")}', 'the function title(), which the library does not compute'],
    ['%{if true}x%{endif}', 'a template directive "%{"'],
    ['${"a" == "b" ? "x" : "y"}', 'an expression the library does not evaluate (operators, conditionals, indexes, ...)'],
    ['${1}', 'an expression starting with "1" (numbers, operators, heredocs, ...)'],
    ['${~ "x"}', 'a "~" strip marker'],
    ['${"x" ~}', 'a "~" strip marker'],
    ['${lower("\u00c9")}', "lower() of text beyond ASCII is computed with the engine's Unicode tables, not known here"],
    ['${replace("ab", "/a/", "x")}', 'replace() with a regular expression or an empty search text is not computed here'],
    ['${format("%d", "1")}', 'format() with the verb "%d" is not computed here (only %s and %%)'],
    ['${join("-", ["a"]...)}', 'an argument expansion "..."'],
    ['${provider::x::y("a")}', 'a provider-defined function'],
    ['${"x"', 'an interpolation the library does not evaluate (operators, conditionals, splats, ...)'],
    ['${"x}', 'an unterminated quoted string'],
    ['${true}', 'the value true'],
    ['${"a\\qb"}', 'an invalid escape "\\q" in a quoted string'],
    ['${["a"]}-x', 'a value that is not text spliced into text'],
    ['${lower("A", "B")}', 'lower() takes 1 argument, given 2'],
  ])('%j is refused: %s', (source, why) => {
    expect(evaluateTemplate(source)).toEqual({ unresolved: why });
  });
});
