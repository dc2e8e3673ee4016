import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readInvariantDeclaration } from '../../../lib/invariants/invariant-declaration';
import { readInvariantsFile } from '../../../lib/invariants/invariants-file';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invariants-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('invariant declarations: a typed model read from plain data, every problem at once', () => {
  it('reads a list, or an object with an invariants list; a bare kind is a selector', () => {
    const one = { id: 'no-ci-prod', reason: 'CI never reads production', who: 'ci', paths: ['secret/data/+/prod/*'], capabilities: ['read'] };
    expect(readInvariantDeclaration([one])).toEqual({ invariants: [{ ...one, who: { kind: 'ci' } }], problems: [] });
    expect(readInvariantDeclaration({ invariants: [one] }).invariants).toHaveLength(1);
  });

  it('names every problem with its field: unknown key, kind, capability, path the store refuses, duplicate id', () => {
    const { invariants, problems } = readInvariantDeclaration([
      { id: 'a', reason: 'r', who: { kind: 'robot' }, paths: ['secret/+*'], capabilities: ['read', 'root'], extra: 1 },
      { id: 'b', reason: ' ', who: 'ci', except: [{ kind: 'pipeline', name: '' }], paths: [], capabilities: ['read'] },
      { id: 'c', reason: 'r', who: 'any', paths: ['x', '@other-applications'], capabilities: ['read'] },
      { id: 'd', reason: 'r', who: 'any', paths: ['@others'], capabilities: ['read'] },
      { id: 'c', reason: 'r', who: 'any', paths: ['y'], capabilities: ['read'] },
      'no',
    ]);
    expect(problems.map(String)).toEqual([
      'invariants[0].extra = 1: is not a field of an invariant (id, reason, who, except, paths, capabilities)',
      'invariants[0].who.kind = "robot": must be one of any, ci, pipeline, application, person',
      `invariants[0].paths[0] = "secret/+*": is not an ACL path the store accepts: path "secret/+*": invalid use of wildcards ('+*' is forbidden)`,
      'invariants[0].capabilities[1] = "root": is not a capability an invariant forbids: use read, write, create, update, patch, delete, list, scan, sudo, subscribe, recover',
      'invariants[1].reason = " ": must say why the invariant holds (non-empty text)',
      'invariants[1].except[0].name = "": must be a name pattern (`*` for any characters), e.g. "jwt/secretstore-iac-pipeline"',
      'invariants[1].paths = []: must be a non-empty list of ACL path patterns',
      'invariants[3].paths[0] = "@others": is not a path word: the only one is "@other-applications" (every other application\'s own paths)',
      'invariants[4].id = "c": is already the id of invariants[2]: invariant ids are unique',
      'invariants[5] = "no": must be an object with id, reason, who, paths, capabilities',
    ]);
    expect(invariants.map((i) => i.id)).toEqual(['c']);
  });

  it('reads a YAML file and a JSON file; a file with problems is refused naming the file and each problem', () => {
    const yaml = path.join(dir, 'secretstore-iac-invariants.yaml');
    fs.writeFileSync(yaml, 'invariants:\n  - id: no-person-sudo\n    reason: people never get sudo\n    who: person\n    paths: ["*"]\n    capabilities: [sudo]\n');
    expect(readInvariantsFile(yaml)).toEqual([{ id: 'no-person-sudo', reason: 'people never get sudo', who: { kind: 'person' }, paths: ['*'], capabilities: ['sudo'] }]);
    const json = path.join(dir, 'bad.json');
    fs.writeFileSync(json, JSON.stringify([{ id: 'X', reason: 'r', who: 'ci', paths: ['a'], capabilities: ['read'] }]));
    expect(() => readInvariantsFile(json)).toThrow(`${json}: 1 problem:\n  invariants[0].id = "X": must be lower-case letters, digits, ".", "_" and "-", starting with a letter or digit`);
    fs.writeFileSync(json, '{');
    expect(() => readInvariantsFile(json)).toThrow(`${json}: not JSON`);
  });
});
