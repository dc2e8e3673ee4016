import { mdCode, mdTable } from '../render/markdown-text';
import { editedItems, Narrowing, NarrowingEvidence, NarrowingItem } from './narrowing';
import { UnsupportedEdit } from './platform-config-edit';

/** What the command did with the narrowing's edits of the configuration source. */
export interface NarrowingEditOutcome {
  /** The configuration source, as given. */
  readonly file: string;
  /** Whether the file was written (`--write`), else the edits are what it would change. */
  readonly written: boolean;
  /** Fields edited (or to be edited). */
  readonly applied: readonly string[];
  /** Edits the source's form does not allow: to make by hand. */
  readonly unsupported: readonly UnsupportedEdit[];
}

function windowText(n: Narrowing): string {
  return `${n.window.since ?? 'the start of the log'} to ${n.window.until ?? 'the end of the log'} (requests seen ${n.seen.first ?? 'none'} to ${n.seen.last ?? 'none'})`;
}

function evidenceText(e: NarrowingEvidence): string {
  const rules = e.rules.map((r) => `${r.rule} (${r.capabilities.join(', ')})`).join(', ');
  const seen = e.logins === 0 && e.requests === 0 ? 'no login and no request in the window' : `${e.logins} login(s), ${e.requests} request(s), last seen ${e.lastSeen}`;
  return `${e.identity}: ${rules === '' ? '' : `${rules} never used in the window; `}${seen}`;
}

/** The items by what happens to them; a retired role (`--retire-idle`) is an edit like a grant's, the other idle roles are listed apart. */
function group(n: Narrowing) {
  const edited = editedItems(n);
  return {
    edited,
    manual: n.items.filter((i) => i.keptBy === undefined && i.edit === undefined),
    kept: n.items.filter((i) => i.keptBy !== undefined),
    idle: n.idleRoles.filter((i) => !edited.includes(i)),
  };
}

/** The narrowing as plain lines for the terminal. */
export function renderNarrowingText(n: Narrowing, outcome: NarrowingEditOutcome): string {
  const { edited, manual, kept, idle } = group(n);
  const lines = [`narrowing of the window ${windowText(n)}`, ''];
  const section = (title: string, items: readonly NarrowingItem[], note: (i: NarrowingItem) => string) => {
    lines.push(`${title} (${items.length}):`);
    for (const i of items) {
      lines.push(`  ${note(i)}`, `    declared by ${i.declaration}`, ...i.evidence.map((e) => `    ${evidenceText(e)}`));
    }
    lines.push('');
  };
  const unsupported = new Set(outcome.unsupported.map((u) => JSON.stringify(u.edit)));
  section(`remove (${outcome.written ? 'written to' : 'would change'} ${outcome.file})`, edited.filter((i) => !unsupported.has(JSON.stringify(i.edit))), (i) => i.change);
  lines.push(`change by hand: the source's form does not allow the edit (${outcome.unsupported.length}):`);
  for (const u of outcome.unsupported) lines.push(`  ${u.change}: ${u.reason}`);
  lines.push('');
  section('nothing in the configuration changes these', manual, (i) => i.change);
  section('kept (--keep)', kept, (i) => `${i.field ?? i.declaration}: kept by --keep ${i.keptBy}`);
  section('roles never logged in', idle, (i) => (i.keptBy !== undefined ? `${i.evidence[0].identity}: kept by --keep ${i.keptBy}` : i.change));
  return lines.join('\n').trimEnd();
}

/** The narrowing as a merge request's description: the change, and the evidence of each grant it removes. */
export function renderNarrowingMarkdown(n: Narrowing, outcome: NarrowingEditOutcome): string {
  const { edited, manual, kept, idle } = group(n);
  const unsupported = new Set(outcome.unsupported.map((u) => JSON.stringify(u.edit)));
  const evidence = (i: NarrowingItem) => i.evidence.map((e) => mdCode(evidenceText(e))).join('<br>');
  const out = [
    '## Least privilege: remove access not used in the window',
    '',
    `From the store's audit log, window ${mdCode(windowText(n))}. Each grant below allowed no request in the window. Review with \`secretstore-iac access-diff\` and its \`--usage\` file before merging.`,
    '',
    `### Removed in \`${outcome.file}\` (${edited.length - unsupported.size})`,
    '',
  ];
  const table = (items: readonly NarrowingItem[], change: (i: NarrowingItem) => string) =>
    items.length === 0 ? ['None.', ''] : [mdTable(['change', 'declared by', 'evidence'], items.map((i) => [change(i), mdCode(i.declaration), evidence(i)])), ''];
  out.push(...table(edited.filter((i) => !unsupported.has(JSON.stringify(i.edit))), (i) => mdCode(i.change)));
  out.push(`### To change by hand (${outcome.unsupported.length})`, '');
  out.push(...(outcome.unsupported.length === 0 ? ['None.', ''] : [...outcome.unsupported.map((u) => `- ${mdCode(u.change)}: ${mdCode(u.reason)}`), '']));
  out.push(`### Not changed by any configuration field (${manual.length})`, '', ...table(manual, (i) => mdCode(i.change)));
  out.push(`### Kept regardless (\`--keep\`) (${kept.length})`, '', ...table(kept, (i) => mdCode(`kept by --keep ${i.keptBy}`)));
  out.push(`### Roles that never logged in (${idle.length})`, '', ...table(idle, (i) => mdCode(i.keptBy !== undefined ? `kept by --keep ${i.keptBy}` : i.change)));
  return `${out.join('\n').trimEnd()}\n`;
}
