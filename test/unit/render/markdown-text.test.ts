import { mdCell, mdCode, mdMessage, mdText } from '../../../lib/render/markdown-text';

// Issue 36: every text from the configuration or the store that reaches a Markdown note is encoded.

/** The text outside inline code spans of a Markdown line. */
const outsideCode = (markdown: string) => markdown.replace(/(`+) .*? \1|(`+)[^`]*?\2/g, '');

const HOSTILE: readonly string[] = [
  '<img src=x onerror=alert(1)>',
  '@all',
  '[click](https://evil.example)',
  '![image](https://evil.example/i.png)',
  'https://evil.example/x',
  'www.evil.example',
  '#12 !34 ~label $5 %6 &7',
  '**bold** _it_ ~~gone~~',
  '`code` and ``more``',
  'a | b',
  '<script>alert(1)</script>',
  '&lt;b&gt;',
  'line\nbreak ## heading',
  '\\[escaped\\]',
  '\u001b[31mred',
];

describe('mdText: configuration text as Markdown prose', () => {
  it.each(HOSTILE)('%j: no Markdown, HTML, link, mention or reference outside inline code, one line', (text) => {
    const md = mdText(text);
    expect(md).not.toContain('\n');
    expect(outsideCode(md)).not.toMatch(/[<>[\]!@#~$%&*_`|\\]|:\/\/|www\./);
  });

  it('plain words stay as they are; a hostile word becomes code that shows it', () => {
    expect(mdText('on-call debugging of the dev orchestrator (by hand), §8 → done')).toBe('on-call debugging of the dev orchestrator (by hand), §8 → done');
    expect(mdText('ping @all now')).toBe('ping `@all` now');
    expect(mdText('see <img src=x> now')).toBe('see `<img src=x>` now');
    expect(mdText('a <b> and [c](d) end')).toBe('a `<b> and [c](d)` end');
    expect(mdText('one\ntwo')).toBe('`one\\u000atwo`');
  });
});

describe('mdMessage: a library message with values between backticks', () => {
  it('keeps the library\'s code spans and encodes the prose', () => {
    expect(mdMessage('gains `sudo` on `secret/x`: reason "@all <b>"')).toBe('gains `sudo` on `secret/x`: reason `"@all <b>"`');
  });

  it.each(HOSTILE)('a value %j between the backticks, or in the prose, stays inert', (value) => {
    for (const message of [`gains \`read\` on \`${value}\`: fine`, `stated reason: ${JSON.stringify(value)}`, `odd \` ${value}`]) {
      const md = mdMessage(message);
      expect(md).not.toContain('\n');
      expect(outsideCode(md)).not.toMatch(/[<>[\]!@#~$%&*_|\\]|:\/\/|www\./);
    }
  });
});

describe('mdCode and mdCell', () => {
  it('a value with backticks gets a longer fence; a cell escapes | and line breaks', () => {
    expect(mdCode('a`b')).toBe('`` a`b ``');
    expect(mdCell('a | b\nc')).toBe('a \\| b c');
  });
});
