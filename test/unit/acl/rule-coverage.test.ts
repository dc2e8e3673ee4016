import { covers } from '../../../lib/acl/rule-coverage';
import { RulePath } from '../../../lib/acl/rule-path';

const rule = (p: string) => RulePath.parse(p);

describe('rule coverage (used to tell a wildcard took over narrower rules)', () => {
  it.each([
    ['secret/data/*', 'secret/data/app/*', true],
    ['secret/data/*', 'secret/data/app/x', true],
    ['secret/data/*', 'secret/data/+/x', true],
    ['secret/data/app/*', 'secret/data/*', false],
    ['secret/data/app*', 'secret/data/apple/x', true],
    ['secret/+/x', 'secret/a/x', true],
    ['secret/+/x', 'secret/+/x', true],
    ['secret/+/x', 'secret/a/y', false],
    ['secret/+/x*', 'secret/a/xy/z', true],
    ['secret/+/x*', 'secret/a/*', false],
    ['secret/a/x', 'secret/+/x', false],
    ['secret/x', 'secret/x', true],
  ])('%s covers %s: %s', (wide, narrow, expected) => {
    expect(covers(rule(wide), rule(narrow))).toBe(expected);
  });
});
