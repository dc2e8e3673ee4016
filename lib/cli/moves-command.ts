import * as fs from 'fs';
import * as path from 'path';
import { readDeclaredObjects } from '../reconcile/declared-object';
import { MOVES_FILE, renderMovesFile, StackMoveBlocks, stackMoves } from '../reconcile/stack-moves';
import { readSynthOutput } from '../sources/synth-output';
import { terminalLine } from '../private/terminal-text';
import { writeFileAtomically } from './adopt-command';
import { Command } from './command';
import { parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { openSourceArgument, SOURCE_HELP } from './source-argument';
import { UsageError } from './usage-error';

/** The `terraform` and `provider` blocks of a synthesized stack file (backend, required providers). */
function engineSettings(file: string): { terraform: unknown; provider: unknown } {
  const stack = JSON.parse(fs.readFileSync(file, 'utf8')) as { terraform?: unknown; provider?: unknown };
  return { terraform: stack.terraform, provider: stack.provider };
}

/**
 * `secretstore-iac moves BASE HEAD`: writes the engine's `removed` (keep on the store) and `import`
 * blocks for every object that BASE declares in one stack and HEAD in another (docs/sharding.md).
 */
export const movesCommand: Command = {
  name: 'moves',
  summary: 'write removed/import blocks for objects that moved between stacks (re-sharding), so no plan recreates them',
  usage: [
    'Usage: secretstore-iac moves BASE HEAD [--dry-run]',
    '',
    'Compares where each store object (auth mount, role, policy) is declared in BASE and in HEAD. For',
    `each object in another stack in HEAD, writes into HEAD/stacks/<stack>/${MOVES_FILE}:`,
    '`removed { from = ADDRESS; lifecycle { destroy = false } }` in the stack it left (the engine',
    'forgets it, the store keeps it) and `import { to = ADDRESS; id = ... }` in the stack it joined.',
    'The plans then show imports and forgets, no create or destroy: Role IDs and issued Secret IDs',
    `stay valid. A stack without moves loses an old ${MOVES_FILE}. A stack of BASE that HEAD no longer`,
    `has (fewer shards) gets a directory holding only ${MOVES_FILE}, with its backend and provider:`,
    'plan and apply it with `secretstore-iac tf STACK` like the others, then delete it.',
    '',
    'BASE is the configuration the stacks were last applied from (the target branch, or the commit',
    'before the merge): a git ref (synthesized in a temporary worktree) or a synthesized output',
    `directory. HEAD is the synthesized output directory to plan (cdktf.out). ${MOVES_FILE} is not`,
    'written by the synthesis, so a re-synthesis keeps it; re-run moves after changing the sharding again.',
    '',
    SOURCE_HELP.replace('SOURCE is', 'BASE is'),
    '',
    'Apply order: the mount stack (app-roles) first, then the shards, retired stacks last; a stack',
    'that only forgets may go in any order.',
    '',
    '  --dry-run   print the moves, write nothing',
    '',
    'Exit codes: 0 done (moves written, or none needed), 2 usage error, 3 unreadable output or',
    'an object declared by two stacks (nothing written).',
    '',
    'Example: npm run synth && secretstore-iac moves origin/main cdktf.out',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(args, { 'dry-run': { type: 'boolean' } }, { min: 2, max: 2, names: 'BASE and HEAD' });
    const headDir = path.resolve(context.cwd, positionals[1]);
    if (!fs.existsSync(path.join(headDir, 'manifest.json'))) {
      throw new UsageError(`HEAD must be a synthesized output directory (with manifest.json) to write into: ${positionals[1]} is not one`);
    }
    const base = await openSourceArgument(positionals[0], context);
    try {
      const result = stackMoves(readDeclaredObjects(base.dir), readDeclaredObjects(headDir));
      if (result.ambiguous.length > 0) {
        throw new Error(`nothing written: objects declared by more than one stack in BASE or HEAD, whose move is ambiguous:\n  ${result.ambiguous.map(terminalLine).join('\n  ')}`);
      }
      const headStacks = new Set(readSynthOutput(headDir).map((s) => s.name));
      const baseStacks = new Map(readSynthOutput(base.dir).map((s) => [s.name, s.file]));
      const out: string[] = [];
      const writes: Array<() => void> = [];
      const dry = values['dry-run'] === true;
      out.push(
        result.moves.length === 0
          ? `No object moved between stacks from ${terminalLine(base.label)} to ${terminalLine(positionals[1])}.`
          : `${result.moves.length} object${result.moves.length === 1 ? '' : 's'} moved between stacks from ${terminalLine(base.label)} to ${terminalLine(positionals[1])}:`,
      );
      result.moves.forEach((m) => out.push(`  ${m.kind} ${terminalLine(m.storePath)}: ${terminalLine(m.from.stack)} -> ${terminalLine(m.to.stack)}`));
      // Every stack of HEAD (a stale moves file goes), and every stack of BASE that objects left.
      const stacks = [...new Set([...headStacks, ...result.byStack.keys()])].sort();
      for (const stack of stacks) {
        const stackDir = path.join(headDir, 'stacks', stack);
        const file = path.join(stackDir, MOVES_FILE);
        const blocks: StackMoveBlocks | undefined = result.byStack.get(stack);
        if (!blocks) {
          if (fs.existsSync(file)) {
            writes.push(() => fs.rmSync(file, { force: true }));
            out.push(`${dry ? 'Would remove' : 'Removed'} ${path.relative(context.cwd, file)}: no move in this stack.`);
          }
          continue;
        }
        const retired = !headStacks.has(stack);
        // A retired stack never gains objects: only stacks of HEAD are move targets.
        const content = renderMovesFile(blocks, retired ? engineSettings(baseStacks.get(stack)!) : undefined);
        writes.push(() => {
          fs.mkdirSync(stackDir, { recursive: true });
          writeFileAtomically(file, content);
        });
        out.push(
          `${dry ? 'Would write' : 'Wrote'} ${path.relative(context.cwd, file)}: forget ${blocks.forget.length}, import ${blocks.imports.length}${retired ? ' (a stack HEAD no longer has: plan and apply it, then delete the directory)' : ''}.`,
        );
      }
      if (!dry) writes.forEach((w) => w());
      else out.push('Dry run: nothing written.');
      context.stdout(out.join('\n'));
      return ExitCode.ok;
    } finally {
      base.dispose();
    }
  },
};
