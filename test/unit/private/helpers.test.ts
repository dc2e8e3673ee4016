import { compareStrings } from '../../../lib/private/compare-strings';
import { isHttpUrl } from '../../../lib/model/http-url';
import { mountSegmentProblems } from '../../../lib/model/mount-segment';

describe('compareStrings', () => {
  it('orders by code unit like the default sort, not by locale', () => {
    const words = ['b', 'B', 'a', 'Ä', 'a-b', 'a_b', '', 'a'];
    expect([...words].sort(compareStrings)).toEqual([...words].sort());
    expect(compareStrings('x', 'x')).toBe(0);
  });
});

describe('isHttpUrl accepts exactly what the four checks it replaced accepted', () => {
  // The expressions each caller used before the helper existed.
  const before = {
    prefix: /^https?:\/\/[^\s/]+/,
    ciUrl: /^https?:\/\/[^\s/{}]+(\/[^\s{}]*)?$/,
    hcl: /^https?:\/\/[^\s/"\\]+(\/[^\s"\\]*)?$/,
  };
  const samples = [
    'https://ci.example',
    'http://ci.example:8200',
    'https://ci.example/',
    'https://ci.example/group/sub',
    'https://ci.example/a b',
    'https://ci .example',
    'https://{ci_url}',
    'https://ci.example/{x}',
    'https://ci.example/"x',
    'https://ci"example',
    'https://ci.example/a\\b',
    'https://',
    'https:///path',
    'ftp://ci.example',
    'ci.example',
    ' https://ci.example',
    'HTTPS://ci.example',
  ];
  it.each(samples)('%j', (sample) => {
    expect(isHttpUrl(sample, { prefixOnly: true })).toBe(before.prefix.test(sample));
    expect(isHttpUrl(sample, { forbidden: '{}' })).toBe(before.ciUrl.test(sample));
    expect(isHttpUrl(sample, { forbidden: '"\\' })).toBe(before.hcl.test(sample));
  });
  it('refuses an absent or empty address', () => {
    expect(isHttpUrl(undefined)).toBe(false);
    expect(isHttpUrl('')).toBe(false);
  });
});

describe('mountSegmentProblems', () => {
  it('accepts one lower-case segment and names field, value and rule otherwise', () => {
    expect(mountSegmentProblems('path', 'jwt')).toEqual([]);
    expect(mountSegmentProblems('path', 'ci_jwt-2')).toEqual([]);
    expect(mountSegmentProblems('path', 'auth/jwt').map(String)).toEqual(['path = "auth/jwt": must be a single lower-case mount segment']);
    expect(mountSegmentProblems('path', 'JWT')).toHaveLength(1);
    expect(mountSegmentProblems('path', '')).toHaveLength(1);
  });
});
