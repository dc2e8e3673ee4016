import * as ts from 'typescript';
import { compareStrings } from '../private/compare-strings';
import { ConfigEdit } from './narrowing';

/** One edit the source's form does not allow: the field, the value to set, and the construct in the way. */
export interface UnsupportedEdit {
  /** The narrowing's edit. */
  readonly edit: ConfigEdit;
  /** The `PlatformConfig` field to change by hand, and how. */
  readonly change: string;
  /** Why the source cannot be edited there: the construct found (`a spread`, `the variable accounts`). */
  readonly reason: string;
}

/** The source after the edits it allows, and those it does not. */
export interface PlatformConfigEditResult {
  readonly text: string;
  readonly applied: readonly ConfigEdit[];
  readonly unsupported: readonly UnsupportedEdit[];
}

function propertyName(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

/** The object literal typed `PlatformConfig` (`const x: PlatformConfig = {...}`, or `{...} satisfies PlatformConfig`). */
function configLiteral(source: ts.SourceFile): ts.ObjectLiteralExpression | undefined {
  let found: ts.ObjectLiteralExpression | undefined;
  const unwrap = (e: ts.Expression): ts.Expression => (ts.isParenthesizedExpression(e) || ts.isSatisfiesExpression(e) || ts.isAsExpression(e) ? unwrap(e.expression) : e);
  const typed = (e: ts.Expression | undefined, type: ts.TypeNode | undefined): boolean =>
    (type !== undefined && type.getText(source) === 'PlatformConfig') || (e !== undefined && ts.isSatisfiesExpression(e) && e.type.getText(source) === 'PlatformConfig');
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (ts.isVariableDeclaration(node) && node.initializer && typed(node.initializer, node.type)) {
      const e = unwrap(node.initializer);
      if (ts.isObjectLiteralExpression(e)) found = e;
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The property `name` of an object literal; a reason when the literal's form hides it (a spread, a computed name). */
function member(object: ts.ObjectLiteralExpression, name: string, source: ts.SourceFile): { property?: ts.PropertyAssignment; reason?: string } {
  let property: ts.PropertyAssignment | undefined;
  for (const p of object.properties) {
    if (ts.isPropertyAssignment(p) && propertyName(p.name) === name) property = p;
    else if (ts.isShorthandPropertyAssignment(p) && p.name.text === name) return { reason: `the shorthand property ${name} (a variable)` };
    else if (ts.isSpreadAssignment(p)) return { reason: `the spread ${p.getText(source)}` };
    else if ((ts.isPropertyAssignment(p) || ts.isMethodDeclaration(p)) && propertyName(p.name) === undefined) return { reason: `the computed property ${p.name.getText(source)}` };
  }
  return { property };
}

/** The object literal at `names` below `root`, or why it is none. */
function objectAt(root: ts.ObjectLiteralExpression, names: readonly string[], source: ts.SourceFile): { object?: ts.ObjectLiteralExpression; reason?: string } {
  let object = root;
  const at: string[] = [];
  for (const name of names) {
    at.push(name);
    const { property, reason } = member(object, name, source);
    if (reason !== undefined) return { reason: `${reason} in ${at.slice(0, -1).join('.') || 'the PlatformConfig object'}` };
    if (!property) return { reason: `no property ${at.join('.')} in the object literal` };
    const value = property.initializer;
    if (!ts.isObjectLiteralExpression(value)) return { reason: `${at.join('.')} is ${value.getText(source)}, not an object literal` };
    object = value;
  }
  return { object };
}

/** The indentation of the line `pos` is on. */
function indentAt(text: string, pos: number): string {
  const start = text.lastIndexOf('\n', pos - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

type Splice = { readonly start: number; readonly end: number; readonly text: string };

/** The text removing one property of an object literal, with its comma and line. */
function removeProperty(text: string, object: ts.ObjectLiteralExpression, property: ts.ObjectLiteralElementLike, source: ts.SourceFile): Splice {
  return removeElement(text, object.properties, property, source);
}

/** The splice removing one element of a comma list (properties, array elements), formatting of the rest kept. */
function removeElement(text: string, list: ts.NodeArray<ts.Node>, node: ts.Node, source: ts.SourceFile): Splice {
  const i = list.indexOf(node);
  const start = node.getStart(source);
  if (i < list.length - 1) return { start: lineStartIfBlank(text, start), end: lineStartIfBlank(text, list[i + 1].getStart(source)), text: '' };
  if (i > 0) {
    // The last element: from the end of the one before (its comma kept when the list has a trailing one).
    const trailingComma = list.hasTrailingComma;
    return { start: list[i - 1].end + (trailingComma ? 1 : 0), end: node.end + (trailingComma ? 1 : 0), text: '' };
  }
  // The only element: the list becomes empty.
  return { start: list.pos, end: list.end, text: '' };
}

/** `pos`, moved back to its line's start when only blanks precede it on the line (a whole line is removed). */
function lineStartIfBlank(text: string, pos: number): number {
  const start = text.lastIndexOf('\n', pos - 1) + 1;
  return /^[ \t]*$/.test(text.slice(start, pos)) ? start : pos;
}

/** The splices of one edit on the current text, or why its form does not allow it. */
function splicesOf(text: string, edit: ConfigEdit, source: ts.SourceFile, root: ts.ObjectLiteralExpression): Splice[] | string {
  if (edit.kind === 'account-not-read-by-ci') {
    const { object, reason } = objectAt(root, ['accounts', edit.account], source);
    if (!object) return reason!;
    const readByCi = member(object, 'readByCi', source);
    const consumers = member(object, 'consumers', source);
    if (readByCi.reason !== undefined || consumers.reason !== undefined) return `${readByCi.reason ?? consumers.reason} in accounts.${edit.account}`;
    const splices: Splice[] = [];
    if (readByCi.property) {
      const value = readByCi.property.initializer;
      if (value.kind === ts.SyntaxKind.FalseKeyword) return 'accounts.' + edit.account + '.readByCi is false already';
      if (value.kind !== ts.SyntaxKind.TrueKeyword) return `accounts.${edit.account}.readByCi is ${value.getText(source)}, not the literal true`;
      splices.push({ start: value.getStart(source), end: value.end, text: 'false' });
    }
    if (consumers.property) splices.push(removeProperty(text, object, consumers.property, source));
    if (!readByCi.property) {
      // Added as the literal's first property, on its own line when the literal spans lines.
      const first = object.properties[0];
      if (first === undefined) splices.push({ start: object.getStart(source) + 1, end: object.getStart(source) + 1, text: ' readByCi: false ' });
      else {
        const at = first.getStart(source);
        const multiline = text.slice(object.getStart(source), at).includes('\n');
        splices.push({ start: at, end: at, text: multiline ? `readByCi: false,\n${indentAt(text, at)}` : 'readByCi: false, ' });
      }
    }
    return splices;
  }
  if (edit.kind === 'retire-application' || edit.kind === 'retire-group') {
    const names = edit.kind === 'retire-application' ? ['applications'] : ['people', 'groups'];
    const name = edit.kind === 'retire-application' ? edit.application : edit.group;
    const { object, reason } = objectAt(root, names, source);
    if (!object) return reason!;
    const entry = member(object, name, source);
    if (entry.reason !== undefined) return `${entry.reason} in ${names.join('.')}`;
    if (!entry.property) return `no property ${names.join('.')}.${name} in the object literal`;
    return [removeProperty(text, object, entry.property, source)];
  }
  const { object, reason } = objectAt(root, ['people', 'groups', edit.group], source);
  if (!object) return reason!;
  const reads = member(object, 'reads', source);
  if (reads.reason !== undefined) return `${reads.reason} in people.groups.${edit.group}`;
  if (!reads.property) return `no property people.groups.${edit.group}.reads in the object literal`;
  const array = reads.property.initializer;
  if (!ts.isArrayLiteralExpression(array)) return `people.groups.${edit.group}.reads is ${array.getText(source)}, not an array literal`;
  const spread = array.elements.slice(0, edit.index + 1).find((e) => ts.isSpreadElement(e));
  if (spread) return `the spread ${spread.getText(source)} in people.groups.${edit.group}.reads (the index of reads[${edit.index}] is not in the source)`;
  const element = array.elements[edit.index];
  if (element === undefined) return `people.groups.${edit.group}.reads has ${array.elements.length} entries in the source, no reads[${edit.index}]`;
  return [removeElement(text, array.elements, element, source)];
}

function apply(text: string, splices: readonly Splice[]): string {
  return [...splices].sort((a, b) => b.start - a.start).reduce((t, s) => t.slice(0, s.start) + s.text + t.slice(s.end), text);
}

function manualChange(edit: ConfigEdit): string {
  switch (edit.kind) {
    case 'account-not-read-by-ci':
      return `set accounts.${edit.account}.readByCi to false and drop accounts.${edit.account}.consumers`;
    case 'remove-group-read':
      return `remove people.groups.${edit.group}.reads[${edit.index}]`;
    case 'retire-application':
      return `remove applications.${edit.application}`;
    case 'retire-group':
      return `remove people.groups.${edit.group}`;
  }
}

/** The order edits are made in: a group's reads highest index first (each index the report's). */
function editOrder(e: ConfigEdit): string {
  switch (e.kind) {
    case 'account-not-read-by-ci':
      return `0 ${e.account}`;
    case 'remove-group-read':
      return `1 ${e.group} ${String(1e9 - e.index).padStart(10, '0')}`;
    case 'retire-group':
      return `2 ${e.group}`;
    case 'retire-application':
      return `3 ${e.application}`;
  }
}

/**
 * Applies the narrowing's edits to the source of `stacks/platform.config.ts` with the TypeScript
 * compiler API, on the object literal typed `PlatformConfig`, the rest of the text as it was. An
 * edit whose field the literal does not hold as a literal (a spread, a variable, a computed name or
 * value) is not made: it is returned with the construct in the way, for a person to change, and no
 * edit is half made. A group's reads are removed highest index first, so each index is the one of
 * the configuration the report was made from; a retired group's reads are not edited apart (the
 * group's removal takes them).
 * @param fileName how to name the file in messages
 * @throws Error when the source holds no object literal typed `PlatformConfig`
 */
export function editPlatformConfig(text: string, edits: readonly ConfigEdit[], fileName: string): PlatformConfigEditResult {
  const parse = (t: string) => ts.createSourceFile(fileName, t, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  if (!configLiteral(parse(text))) {
    throw new Error(`${fileName}: no object literal typed PlatformConfig (\`const platformConfig: PlatformConfig = { ... }\` or \`{ ... } satisfies PlatformConfig\`): nothing can be edited; make the changes listed by hand`);
  }
  // A retired group goes with its reads: their own edits are not made (nor listed to make by hand).
  const retiredGroups = new Set(edits.flatMap((e) => (e.kind === 'retire-group' ? [e.group] : [])));
  const ordered = edits.filter((e) => !(e.kind === 'remove-group-read' && retiredGroups.has(e.group))).sort((a, b) => compareStrings(editOrder(a), editOrder(b)));
  const applied: ConfigEdit[] = [];
  const unsupported: UnsupportedEdit[] = [];
  let current = text;
  for (const edit of ordered) {
    const source = parse(current);
    const result = splicesOf(current, edit, source, configLiteral(source)!);
    if (typeof result === 'string') unsupported.push({ edit, change: manualChange(edit), reason: result });
    else {
      current = apply(current, result);
      applied.push(edit);
    }
  }
  return { text: current, applied, unsupported };
}
