import { nameMatches, selects } from '../../../lib/invariants/identity-selector';
import { readInvariantDeclaration } from '../../../lib/invariants/invariant-declaration';
import { SeededRandom } from '../../support/seeded-random';

describe('identity selectors: name patterns matched without backtracking', () => {
  it('`*` is any run of characters, `/` included; everything else literal; the whole name', () => {
    expect(nameMatches('jwt/*-ci', 'jwt/registry-ci')).toBe(true);
    expect(nameMatches('*', '')).toBe(true);
    expect(nameMatches('a*b*a', 'aba')).toBe(true);
    expect(nameMatches('a*b*a', 'ab')).toBe(false);
    expect(nameMatches('a*a', 'a')).toBe(false);
    expect(nameMatches('jwt/.+', 'jwt/x')).toBe(false);
    expect(selects({ kind: 'ci', name: 'jwt/*' }, 'jwt/x', 'application')).toBe(false);
  });

  it('property: equals a regular expression on small random patterns and names', () => {
    const r = SeededRandom.fromEnvironment('identity-selector');
    for (let n = 0; n < 3000; n++) {
      const pattern = Array.from({ length: r.int(7) }, () => r.pick(['a', 'b', '*', '/'])).join('');
      const name = Array.from({ length: r.int(7) }, () => r.pick(['a', 'b', '/'])).join('');
      const regex = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('.*')}$`, 's');
      expect([pattern, name, nameMatches(pattern, name)]).toEqual([pattern, name, regex.test(name)]);
    }
  });

  it('forty stars and an x against a long name answers at once (the backtracking form hung)', () => {
    const pattern = `${'*'.repeat(40)}x`;
    expect(nameMatches(pattern, 'a'.repeat(10_000))).toBe(false);
    expect(nameMatches(pattern, `${'a'.repeat(10_000)}x`)).toBe(true);
  });

  it('a name pattern longer than 256 characters is a problem of the declaration', () => {
    const { problems } = readInvariantDeclaration([{ id: 'x', reason: 'r', who: { kind: 'any', name: 'a'.repeat(257) }, paths: ['a/*'], capabilities: ['read'] }]);
    expect(problems.map(String)).toEqual([expect.stringMatching(/^invariants\[0\]\.who\.name = "a{40}\.\.\.": is 257 characters long: a name pattern has at most 256$/)]);
  });
});
