import { storeText, terminalJson, terminalLine, terminalText } from '../../../lib/private/terminal-text';

// The one encoder store text passes through before it reaches a terminal.

const HOSTILE = [
  ['ESC (clear screen)', '\u001b[2J', '\\u001b[2J'],
  ['OSC (window title)', '\u001b]0;pwned\u0007', '\\u001b]0;pwned\\u0007'],
  ['carriage return', 'ok\rforged', 'ok\\u000dforged'],
  ['C1 CSI', '\u009b31m', '\\u009b31m'],
  ['NEL', 'a\u0085b', 'a\\u0085b'],
  ['DEL', 'a\u007fb', 'a\\u007fb'],
  ['right-to-left override', 'abc\u202edcba', 'abc\\u202edcba'],
  ['first-strong isolate', '\u2068x\u2069', '\\u2068x\\u2069'],
  ['line separator', 'a\u2028b', 'a\\u2028b'],
  ['byte order mark', '\ufeffa', '\\ufeffa'],
] as const;

describe('terminalLine: one value on one line', () => {
  it.each(HOSTILE)('shows %s escaped', (_what, raw, shown) => {
    expect(terminalLine(raw)).toBe(shown);
  });

  it('escapes line feeds and tabs too, so no value forges a report line', () => {
    expect(terminalLine('x\n## Drift: in sync\ty')).toBe('x\\u000a## Drift: in sync\\u0009y');
  });

  it('leaves printable text, any script, as it is', () => {
    expect(terminalLine('secret/data/acme/* — Grüße, 日本 \\u001b')).toBe('secret/data/acme/* — Grüße, 日本 \\u001b');
  });
});

describe('terminalText: a whole report', () => {
  it.each(HOSTILE)('shows %s escaped', (_what, raw, shown) => {
    expect(terminalText(raw)).toBe(shown);
  });

  it('keeps line feeds and tabs', () => {
    expect(terminalText('# Report\n\tline\u001b[0m')).toBe('# Report\n\tline\\u001b[0m');
  });
});

describe('storeText: store text quoted in a message', () => {
  it('is cut to 500 characters by default, saying how many were left out, then escaped', () => {
    expect(storeText('a'.repeat(600))).toBe(`${'a'.repeat(500)}… (100 more characters)`);
    expect(storeText('\u001b'.repeat(3), 2)).toBe('\\u001b\\u001b… (1 more characters)');
  });
});

describe('terminalJson', () => {
  it('is JSON that reads back the same, with no raw control or bidi character', () => {
    const value = { b: [1, 'x'], a: '\u001b[2J\u009b\u202e\u2028\u007f' };
    const text = terminalJson(value);
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e\u2028]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});
