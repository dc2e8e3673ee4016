import * as fs from 'fs';
import * as path from 'path';
import { pageCommands } from '../../support/readme-commands';
import { REPO_ROOT } from '../../support/paths';

const fence = '```';
const commands = (markdown: string) => pageCommands(markdown).map((c) => [c.line, c.form, c.command]);

describe('the commands of a README: the rule test/store/readme-commands.store.test.ts applies', () => {
  it('every line of a sh block is a command: comments cut off, blank and comment lines skipped, continuations joined', () => {
    const page = [
      '# Title',
      `${fence}sh`,
      'npm run synth        # compile and synthesize',
      '',
      '# a comment line',
      'npx secretstore-iac tf ci-access \\',
      '  -- plan',
      "echo 'a # in quotes'",
      fence,
    ].join('\n');
    expect(commands(page)).toEqual([
      [3, 'sh block', 'npm run synth'],
      [6, 'sh block', 'npx secretstore-iac tf ci-access -- plan'],
      [8, 'sh block', "echo 'a # in quotes'"],
    ]);
  });

  it('inline code is a command when it starts with a program run from the clone, after NAME=value assignments', () => {
    const page = [
      'Run `npm test`, then `VAULT_TOKEN=$READER_TOKEN npx secretstore-iac drift` or `./node_modules/.bin/secretstore-iac --version`;',
      '`bash scripts/setup.sh',
      '--test` wraps over a line. Not commands: `secretstore-iac provision`, `tf`, `--refuse-replace`, `sudo apt-get install x`.',
    ].join('\n');
    expect(commands(page)).toEqual([
      [1, 'inline', 'npm test'],
      [1, 'inline', 'VAULT_TOKEN=$READER_TOKEN npx secretstore-iac drift'],
      [1, 'inline', './node_modules/.bin/secretstore-iac --version'],
      [2, 'inline', 'bash scripts/setup.sh --test'],
    ]);
  });

  it('the same command twice is one command, at its first place; commands are in page order', () => {
    const page = ['`npm run demo` first', `${fence}sh`, 'npm run synth', 'npm run demo', fence, 'again: `npm run synth`'].join('\n');
    expect(commands(page)).toEqual([
      [1, 'inline', 'npm run demo'],
      [3, 'sh block', 'npm run synth'],
    ]);
  });

  it('ts, hcl, text and untagged blocks hold no command', () => {
    const page = [`${fence}ts`, 'npm run x', fence, `${fence}hcl`, 'path "x" {}', fence, fence, 'secretstore-iac: 2 problems found', fence].join('\n');
    expect(commands(page)).toEqual([]);
  });

  it('refuses a block in another language, and an output block with a command in it, naming the line', () => {
    expect(() => pageCommands(['text', `${fence}bash`, 'npm run demo', fence].join('\n'))).toThrow(
      'line 2: a ```bash block: commands go in ```sh blocks, other blocks are ts, hcl, text, (none)',
    );
    expect(() => pageCommands(['text', fence, 'output', '$ npx secretstore-iac drift', fence].join('\n'))).toThrow(
      'line 4: a command in an output block: put it in a ```sh block',
    );
    expect(() => pageCommands([`${fence}sh`, 'npm test'].join('\n'))).toThrow('line 1: fenced block never closed');
  });
});

describe('README.md', () => {
  it('is at most 250 lines: the newcomer path; the reference is docs/ (issue 18)', () => {
    const lines = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(250);
  });

  it('follows the rule: its commands can be read (no command hidden in a block the rule refuses)', () => {
    expect(pageCommands(fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8')).length).toBeGreaterThan(0);
  });
});
