import * as fs from 'fs';
import * as path from 'path';
import * as lib from '../../../lib';
import { PLATFORM_RULES, RULES_DOCUMENT_FILE, rulesDocument } from '../../../lib';
import { REPO_ROOT } from '../../support/paths';

describe('RULES.md is generated from the rule objects', () => {
  it('RULES.md is what the rule objects generate (run `npm run rules:doc` after changing a rule)', () => {
    expect(fs.readFileSync(path.join(REPO_ROOT, RULES_DOCUMENT_FILE), 'utf8')).toBe(rulesDocument());
  });

  it('lists the rules in id order, one table row each', () => {
    const rows = rulesDocument().split('\n').filter((l) => l.startsWith('| SSI-'));
    expect(rows.map((r) => r.split(' | ')[0].slice(2))).toEqual(PLATFORM_RULES.map((r) => r.id));
    expect(PLATFORM_RULES.map((r) => r.id)).toEqual(['SSI-R1', 'SSI-R2', 'SSI-R3', 'SSI-R4', 'SSI-R5', 'SSI-R6', 'SSI-R7', 'SSI-R8', 'SSI-R9', 'SSI-R10', 'SSI-R11', 'SSI-R12', 'SSI-R13', 'SSI-R14', 'SSI-R15', 'SSI-R16', 'SSI-R17', 'SSI-R18']);
  });

  it('a rule text with a pipe cannot break the table', () => {
    const doc = rulesDocument([{ id: 'X-1', description: 'a | b', spec: '§9', check: () => [] }]);
    expect(doc).toContain('| X-1 | a \\| b | §9 |');
  });

  it('every rule text is one sentence on one line', () => {
    PLATFORM_RULES.forEach((r) => expect(r.description).toMatch(/^[A-Z][^\n]*\.$/));
  });
});

describe('lib/rules holds one file per rule, named by its id, and every one is checked', () => {
  const files = fs.readdirSync(path.join(REPO_ROOT, 'lib', 'rules')).filter((f) => /^ssi-r\d+-.*\.ts$/.test(f));

  it.each(files)('%s exports the rule of its id, and PLATFORM_RULES holds it', (file) => {
    const n = /^ssi-r(\d+)-/.exec(file)![1];
    const rule = (lib as Record<string, unknown>)[`SSI_R${n}`];
    expect(rule).toMatchObject({ id: `SSI-R${n}` });
    expect(PLATFORM_RULES).toContain(rule);
  });

  it('there is a file for every rule', () => {
    expect(files.length).toBe(PLATFORM_RULES.length);
  });
});

describe('the README points at RULES.md instead of copying the rules', () => {
  it('mentions RULES.md and lists no rule row of its own', () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('[RULES.md](RULES.md)');
    expect(readme).not.toMatch(/^\| SSI-R\d/m);
  });
});
