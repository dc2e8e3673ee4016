import { execFileSync } from 'child_process';
import { shellQuote } from '../../../lib/private/shell-quote';

describe('shellQuote', () => {
  it("writes ' as '\\'' and nothing else escaped", () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('')).toBe(`''`);
    expect(shellQuote('$HOME `id` "q" \\')).toBe(`'$HOME \`id\` "q" \\'`);
  });

  it('gives back every value unchanged through a POSIX shell', () => {
    const values = ["it's", "''", 'a $HOME `id` $(id) "q" \\n', 'multi\nline', '', 'é😀'];
    const script = `printf '%s\\0' ${values.map(shellQuote).join(' ')}`;
    expect(execFileSync('sh', ['-c', script], { encoding: 'utf8' }).split('\0').slice(0, -1)).toEqual(values);
  });
});
