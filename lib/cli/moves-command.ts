import * as fs from 'fs';
import * as path from 'path';
import { declaredObjectsOf } from '../reconcile/declared-object';
import { MOVES_FILE, renderMovesFile, separateRetiredOwnGrants, StackMoveBlocks, stackMoves } from '../reconcile/stack-moves';
import { renderStackMovesMarkdown } from '../reconcile/stack-moves-markdown';
import { renderRetiredOwnGrants, RETIRED_OWN_GRANTS_FILE, retiredGrantsUpdates, retiredOwnGrants } from '../reconcile/retired-stack-grants';
import { MovesFileAction, stackMovesJson } from '../reconcile/stack-moves-json';
import { readSynthOutput } from '../sources/synth-output';
import { declaredPipelineGrants } from '../reconcile/pipeline-grants';
import { terminalJson, terminalLine } from '../private/terminal-text';
import { compareStrings } from '../private/compare-strings';
import { writeFileAtomically } from './adopt-command';
import { sealBookkeeping } from '../engine/bookkeeping-seal';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { outputFilePath, writeOutputFile } from './output-file';
import { openSourceArgument, SOURCE_HELP } from './source-argument';
import { UsageError } from './usage-error';

/** The `terraform` and `provider` blocks of a synthesized stack file (backend, required providers). */
function engineSettings(file: string): { terraform: unknown; provider: unknown } {
  const stack = JSON.parse(fs.readFileSync(file, 'utf8')) as { terraform?: unknown; provider?: unknown };
  return { terraform: stack.terraform, provider: stack.provider };
}

/** The sentence of the Markdown note on how a removal is applied outside the pipeline. */
const APPROVAL_BY_HAND = 'Outside the configuration pipeline, apply them deliberately: `secretstore-iac tf STACK --refuse-replace --allow-removals -- apply PLANFILE` (docs/pipelines.md §8).';

/**
 * `secretstore-iac moves BASE HEAD`: writes the engine's `removed` (keep on the store) and `import`
 * blocks for every object that BASE declares in one stack and HEAD in another, `moved` blocks for
 * every object renamed within a stack (docs/sharding.md), and lists the objects HEAD removes.
 */
export const movesCommand: Command = {
  name: 'moves',
  summary: 'write removed/import/moved blocks for objects that moved between stacks or were renamed, so no plan recreates them',
  usage: [
    'Usage: secretstore-iac moves BASE HEAD [--dry-run] [--markdown-file FILE] [--approval TEXT] [--format text|json]',
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
    'An object HEAD declares in the same stack under another resource address (its construct id, or a',
    'parent\'s, was renamed; same store identity: mount and role name, policy name) gets',
    '`moved { from = OLD; to = NEW }` there: the state follows the rename, the store keeps the object',
    '(same Role ID, issued Secret IDs stay valid).',
    '',
    'An object BASE declares and HEAD declares nowhere is a removal: listed, never written into a',
    'file. Its stack\'s plan destroys it, which `tf --refuse-replace` refuses unless `--allow-removals`',
    'is given (docs/pipelines.md §8: the pipeline applies it only in a manual job). A stack of BASE',
    `that HEAD no longer has always gets its directory with ${MOVES_FILE} (its backend and provider), so`,
    'its removal can be planned. A role of HEAD that BASE gave a retired stack\'s policy (the',
    'configuration pipeline\'s grant there) keeps it until the removal is applied, through',
    '<stack>/retired-stack-grants_override.tf.json (docs/pipelines.md §8). The pipeline roles\' own',
    `grants in a retired stack whose other objects all moved are not removals: ${RETIRED_OWN_GRANTS_FILE}`,
    'beside its moves file records them, and its plan destroys them without --allow-removals.',
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
    '  --markdown-file FILE  also write the removals (what access is revoked), moves and renames',
    '              as Markdown to FILE (a merge request\'s note; empty when there are none)',
    '  --approval TEXT  the sentence of that note on how removals are applied (the pipeline names',
    '              its manual job)',
    '  --format text|json  text (default), or one JSON object: base, head, written, and per stack',
    '              its moves file (path, action) and the objects moved (renamed), forgotten,',
    '              imported and removed (docs/reference.md)',
    '',
    'Exit codes: 0 done (moves written, or none needed), 2 usage error, 3 unreadable output or',
    'an object declared by two stacks, or renamed from an address HEAD declares again (nothing written).',
    '',
    'Example: npm run synth && secretstore-iac moves origin/main cdktf.out',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(
      args,
      { 'dry-run': { type: 'boolean' }, 'markdown-file': { type: 'string' }, approval: { type: 'string' }, format: { type: 'string' } },
      { min: 2, max: 2, names: 'BASE and HEAD' },
    );
    const json = formatOption(values.format, ['text', 'json'] as const, 'text') === 'json';
    const markdownPath = typeof values['markdown-file'] === 'string' ? outputFilePath('--markdown-file', values['markdown-file'], context.cwd) : undefined;
    const headDir = path.resolve(context.cwd, positionals[1]);
    if (!fs.existsSync(path.join(headDir, 'manifest.json'))) {
      throw new UsageError(`HEAD must be a synthesized output directory (with manifest.json) to write into: ${positionals[1]} is not one`);
    }
    const base = await openSourceArgument(positionals[0], context);
    try {
      // Each output read once (its stacks' JSON parsed once), for its objects, its grants and its retired stacks.
      const baseOutput = readSynthOutput(base.dir);
      // A stack of HEAD with the bytes of BASE's (every stack the change did not touch) is not parsed or resolved again.
      const headOutput = readSynthOutput(headDir, baseOutput);
      const baseObjects = declaredObjectsOf(baseOutput, base.dir);
      const headObjects = declaredObjectsOf(headOutput, headDir, undefined, { stacks: baseOutput, objects: baseObjects });
      // The pipeline roles' own grants in retired stacks, recognised from BASE's synthesis: destroyed
      // without approval when they are all such a stack removes (docs/pipelines.md §8).
      // A pipeline grant on one side and another object on the other is never a move (a retiring grant
      // taken for a move into an application's policy gave the plan role that application's secrets).
      const grantAddresses = (output: typeof baseOutput) => new Set(declaredPipelineGrants(output).map((g) => `${g.stack} ${g.address}`));
      const moved = stackMoves(baseObjects, headObjects, { base: grantAddresses(baseOutput), head: grantAddresses(headOutput) });
      const reassigned = new Set((moved.reassigned ?? []).map((r) => r.storePath));
      const ownGrants = retiredOwnGrants(baseOutput, headOutput).filter((g) => !reassigned.has(g.storePath));
      const result = separateRetiredOwnGrants(moved, ownGrants);
      if (result.ambiguous.length > 0) {
        throw new Error(`nothing written: objects declared by more than one stack in BASE or HEAD, whose move is ambiguous:\n  ${result.ambiguous.map(terminalLine).join('\n  ')}`);
      }
      if (result.conflicts.length > 0) {
        throw new Error(
          `nothing written: renames the engine cannot follow (a \`moved\` block from an address still declared is refused); rename in two merge requests, or give the new object another construct id:\n  ${result.conflicts.map(terminalLine).join('\n  ')}`,
        );
      }
      const headStacks = new Set(headOutput.map((s) => s.name));
      const baseStacks = new Map(baseOutput.map((s) => [s.name, s.file]));
      const out: string[] = [];
      const writes: Array<() => void> = [];
      // What moves writes (content) or removes (undefined) in each stack directory: sealed last.
      const sealed = new Map<string, Record<string, string | undefined>>();
      const seal = (stackDir: string, name: string, content: string | undefined) => (sealed.get(stackDir) ?? sealed.set(stackDir, {}).get(stackDir)!)[name] = content;
      // What happens to each stack's moves file, for --format json.
      const files = new Map<string, { path: string; action: MovesFileAction; retired: boolean }>();
      const dry = values['dry-run'] === true;
      out.push(
        result.moves.length === 0
          ? `No object moved between stacks from ${terminalLine(base.label)} to ${terminalLine(positionals[1])}.`
          : `${result.moves.length} object${result.moves.length === 1 ? '' : 's'} moved between stacks from ${terminalLine(base.label)} to ${terminalLine(positionals[1])}:`,
      );
      result.moves.forEach((m) => out.push(`  ${m.kind} ${terminalLine(m.storePath)}: ${terminalLine(m.from.stack)} -> ${terminalLine(m.to.stack)}`));
      if (result.renames.length > 0) {
        out.push(`${result.renames.length} object${result.renames.length === 1 ? '' : 's'} renamed within a stack (moved blocks):`);
        result.renames.forEach((r) => out.push(`  ${r.kind} ${terminalLine(r.storePath)} in ${terminalLine(r.stack)}: ${terminalLine(r.from)} -> ${terminalLine(r.to)}`));
      }
      if (result.removals.length > 0) {
        out.push(`${result.removals.length} object${result.removals.length === 1 ? '' : 's'} removed (declared in BASE, nowhere in HEAD): their plans destroy them, applied only with --allow-removals:`);
        result.removals.forEach((r) => out.push(`  ${r.kind} ${terminalLine(r.storePath)} in ${terminalLine(r.stack)}${r.stackRemains ? '' : ' (a stack HEAD no longer has)'}`));
      }
      if ((result.reassigned ?? []).length > 0) {
        out.push(`${result.reassigned!.length} object${result.reassigned!.length === 1 ? '' : 's'} not moved: a pipeline grant on one side and another object on the other, so removed (with approval) and created, never moved:`);
        result.reassigned!.forEach((r) => out.push(`  ${r.kind} ${terminalLine(r.storePath)}: ${r.from.grant ? 'pipeline grant' : 'object'} of ${terminalLine(r.from.stack)} in BASE, ${r.to.grant ? 'pipeline grant' : 'object'} of ${terminalLine(r.to.stack)} (${terminalLine(r.to.address)}) in HEAD`));
      }
      const automatic = result.retiredGrants ?? [];
      if (automatic.length > 0) {
        out.push(
          `${automatic.length} pipeline grant${automatic.length === 1 ? '' : 's'} of retired stacks whose other objects all moved: their plans destroy them without --allow-removals (pipeline-internal, no identity loses access to a secret):`,
        );
        automatic.forEach((r) => out.push(`  ${r.kind} ${terminalLine(r.storePath)} in ${terminalLine(r.stack)}`));
      }
      // Every stack of HEAD (a stale moves file goes), and every stack of BASE that HEAD no longer has:
      // objects left it, or its objects are removed; either way its state must be planned.
      const removedStacks = [...baseStacks.keys()].filter((s) => !headStacks.has(s));
      const stacks = [...new Set([...headStacks, ...result.byStack.keys(), ...removedStacks])].sort();
      for (const stack of stacks) {
        const stackDir = path.join(headDir, 'stacks', stack);
        const file = path.join(stackDir, MOVES_FILE);
        const retired = !headStacks.has(stack);
        const record = path.join(stackDir, RETIRED_OWN_GRANTS_FILE);
        if (!retired && fs.existsSync(record)) {
          // A stack retired before and back in HEAD (its directory kept): the old record would exempt its grants again.
          writes.push(() => fs.rmSync(record, { force: true }));
          seal(stackDir, RETIRED_OWN_GRANTS_FILE, undefined);
          out.push(`${dry ? 'Would remove' : 'Removed'} ${path.relative(context.cwd, record)}: the stack is in HEAD again, not retired.`);
        }
        const blocks: StackMoveBlocks | undefined = result.byStack.get(stack) ?? (retired ? { forget: [], imports: [] } : undefined);
        if (!blocks) {
          if (fs.existsSync(file)) {
            writes.push(() => fs.rmSync(file, { force: true }));
            seal(stackDir, MOVES_FILE, undefined);
            files.set(stack, { path: path.relative(context.cwd, file), action: 'remove', retired });
            out.push(`${dry ? 'Would remove' : 'Removed'} ${path.relative(context.cwd, file)}: no move in this stack.`);
          }
          continue;
        }
        // A retired stack never gains objects: only stacks of HEAD are move targets.
        const content = renderMovesFile(blocks, retired ? engineSettings(baseStacks.get(stack)!) : undefined);
        writes.push(() => {
          fs.mkdirSync(stackDir, { recursive: true });
          writeFileAtomically(file, content);
        });
        seal(stackDir, MOVES_FILE, content);
        files.set(stack, { path: path.relative(context.cwd, file), action: 'write', retired });
        const renamed = (blocks.renames ?? []).length > 0 ? `, rename ${blocks.renames!.length}` : '';
        const destroyed = result.removals.filter((r) => r.stack === stack).length;
        const grants = (result.retiredGrants ?? []).filter((r) => r.stack === stack).length;
        const destroys = [
          ...(destroyed > 0 ? [`destroys ${destroyed} object${destroyed === 1 ? '' : 's'} after approval`] : []),
          ...(grants > 0 ? [`destroys its ${grants} pipeline grant${grants === 1 ? '' : 's'} without approval`] : []),
        ];
        out.push(
          `${dry ? 'Would write' : 'Wrote'} ${path.relative(context.cwd, file)}: forget ${blocks.forget.length}, import ${blocks.imports.length}${renamed}${retired ? ` (a stack HEAD no longer has: plan and apply it${destroys.length > 0 ? `, which ${destroys.join(' and ')}` : ''}, then delete the directory)` : ''}.`,
        );
        if (!retired) continue;
        // The record `tf` recognises the stack's own grants by (its plan has no BASE to read).
        const recorded = ownGrants.filter((g) => g.stack === stack);
        const recordText = recorded.length > 0 ? renderRetiredOwnGrants(recorded) : undefined;
        if (recordText !== undefined) writes.push(() => writeFileAtomically(record, recordText));
        else writes.push(() => fs.rmSync(record, { force: true }));
        seal(stackDir, RETIRED_OWN_GRANTS_FILE, recordText);
      }
      // The roles keep a retired stack's grants until its removal is applied (docs/pipelines.md §8).
      const updates = retiredGrantsUpdates(headDir, baseOutput, headOutput);
      for (const u of updates) {
        const file = path.relative(context.cwd, u.file);
        writes.push(() => (u.grants ? writeFileAtomically(u.file, u.grants.content) : fs.rmSync(u.file, { force: true })));
        seal(path.dirname(u.file), path.basename(u.file), u.grants?.content);
        out.push(u.grants ? `${dry ? 'Would write' : 'Wrote'} ${file}: its roles keep the policies of ${u.grants.retired.map(terminalLine).join(', ')} until their removal is applied.` : `${dry ? 'Would remove' : 'Removed'} ${file}: no retired stack's policy to keep.`);
      }
      const markdownFile = values['markdown-file'];
      if (typeof markdownFile === 'string') {
        const kept = updates.flatMap((u) => (u.grants ? [u.grants] : []));
        const markdown = renderStackMovesMarkdown(result, typeof values.approval === 'string' ? values.approval : APPROVAL_BY_HAND, kept);
        writes.push(() => writeOutputFile('--markdown-file', markdownPath!, markdown));
      }
      // The seal of each stack directory last: `tf` refuses a file that differs from what moves wrote,
      // or that was derived from another synthesis of the stack.
      for (const [stackDir, written] of [...sealed].sort(([a], [b]) => compareStrings(a, b))) writes.push(() => sealBookkeeping(stackDir, written, true));
      if (!dry) writes.forEach((w) => w());
      else out.push('Dry run: nothing written.');
      if (json) context.stdout(terminalJson(stackMovesJson(result, { base: base.label, head: positionals[1] }, files, !dry)));
      else context.stdout(out.join('\n'));
      return ExitCode.ok;
    } finally {
      base.dispose();
    }
  },
};
