import * as fs from 'fs';
import * as path from 'path';
import { renderAccessDiffMarkdown } from '../access/access-diff-markdown';
import { planAdoption } from '../access/adoption-plan';
import { readDeclaredKvMounts } from '../access/declared-kv-mount';
import { readDeclaredObjects } from '../access/declared-object';
import { IMPORT_FILE, renderImportFile } from '../access/import-blocks';
import { readStoreConfiguration } from '../access/store-configuration';
import { readSynthOutput } from '../access/synth-output';
import { PolicyParser } from '../acl/policy-parser';
import { resolveStoreAddress } from '../store/store-address';
import { StoreClient } from '../store/store-client';
import { Command } from './command';
import { parseCommandArguments } from './command-arguments';
import { engineEnvironment, findEngine } from './engine-binary';
import { stateAddresses } from './engine-state';
import { ExitCode } from './exit-code';
import { guardKvMounts } from './kv-mount-guard';
import { readLiveStoreFromEnvironment } from './live-source';
import { highlightMarkdown, stylingEnabled } from './terminal-highlight';
import { UsageError } from './usage-error';

/**
 * `secretstore-iac adopt [STACK...]`: writes import blocks for declared objects that are on the
 * store but not in the stack's state, and prints what adopting changes in access.
 */
export const adoptCommand: Command = {
  name: 'adopt',
  summary: 'import objects already on the store (hand-made, or left by an interrupted apply) instead of creating them',
  usage: [
    'Usage: secretstore-iac adopt [STACK...] [--outdir DIR] [--engine BIN] [--dry-run]',
    '',
    'For each declared object (auth mount, JWT mount, JWT or AppRole role, policy) that already',
    `exists on the store but is not in the stack's state, writes an import block into DIR/stacks/STACK/${IMPORT_FILE},`,
    'so that the next plan shows import + in-place update, never a create over an existing object',
    '(AppRole roles keep their Role ID; Secret IDs already issued keep working). Then prints, per',
    'identity, what applying changes in access: the store as it is → the declarations, with the',
    'risk flags of access-diff. Without STACK: every synthesized stack.',
    '',
    'The same command recovers a stack after an interrupted apply (objects created, not recorded).',
    'The state is read with `ENGINE state list` in the stack directory (any backend; run',
    '`secretstore-iac tf STACK -- init` first). The store is read with VAULT_TOKEN (read and list',
    'only: docs/adoption.md). Nothing is written to the store; review the report, then',
    '`secretstore-iac tf STACK -- plan` and `apply`.',
    '',
    'First it compares each KV mount the stacks rely on (recorded by the synthesis) with the store',
    '(GET sys/mounts): another KV version or engine type, a path inside another mount, or no mount at',
    'all stops it with exit 4 and the contradictions, before any file is written.',
    '',
    '  --outdir DIR    synthesized output directory (default cdktf.out)',
    '  --engine BIN    engine binary (default: $SECRETSTORE_IAC_ENGINE, else $SECRETSTORE_IAC_TOFU,',
    '                  else tofu, else terraform on PATH)',
    '  --dry-run       print the imports and the report, write no file',
    '',
    'Exit codes: 0 done (imports written or none needed), 2 usage error, 3 cannot read the store,',
    'the state or the declarations, or an object on the store that cannot be imported; 4 a declared',
    'KV mount does not match the store.',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(
      args,
      { outdir: { type: 'string' }, engine: { type: 'string' }, 'dry-run': { type: 'boolean' } },
      { min: 0, max: 100, names: 'STACK names' },
    );
    const outdir = path.resolve(context.cwd, String(values.outdir ?? 'cdktf.out'));
    const allStacks = readSynthOutput(outdir).map((s) => s.name);
    const stacks = positionals.length > 0 ? [...new Set(positionals)].sort() : allStacks;
    for (const s of stacks) if (!allStacks.includes(s)) throw new UsageError(`no stack "${s}" in ${outdir}: it has ${allStacks.join(', ')}`);
    const address = resolveStoreAddress(context.env);
    const engine = findEngine(values.engine as string | undefined, context.env);
    // A KV mount of another version makes every declared policy path wrong: stop before any import.
    const stopped = await guardKvMounts('adopt', StoreClient.fromEnvironment(context.env), readDeclaredKvMounts(outdir, stacks), context);
    if (stopped !== undefined) return stopped;
    const live = await readLiveStoreFromEnvironment(context);
    const configuration = readStoreConfiguration(outdir);
    const parser = new PolicyParser();
    const out: string[] = [];
    const conflicts: string[] = [];
    // Files are written only once every stack was read without conflict: nothing half-written.
    const writes: Array<() => void> = [];
    for (const stack of stacks) {
      const stackDir = path.join(outdir, 'stacks', stack);
      const declared = readDeclaredObjects(outdir, stack);
      const state = new Set(stateAddresses(engine, stackDir, engineEnvironment(context.env, address)));
      const plan = await planAdoption(stack, declared, configuration, live, state, parser);
      conflicts.push(...plan.conflicts.map((c) => `${stack}: ${c}`));
      const file = path.join(stackDir, IMPORT_FILE);
      out.push(`# Stack ${stack}`, '');
      out.push(`${plan.inState} resources in state; ${plan.imports.length} to import; ${plan.creates.length} to create.`);
      if (plan.imports.length > 0) {
        out.push('', 'Import (already on the store, not in state):', ...plan.imports.map((b) => `  ${b.to}  <-  ${b.id}`));
      }
      if (plan.creates.length > 0) out.push('', 'Create (not on the store):', ...plan.creates.map((o) => `  ${o.address}  (${o.storePath})`));
      if (values['dry-run'] !== true) {
        if (plan.imports.length > 0) {
          writes.push(() => fs.writeFileSync(file, renderImportFile(plan.imports)));
          out.push('', `Wrote ${path.relative(context.cwd, file) || file}.`);
        } else if (fs.existsSync(file)) {
          writes.push(() => fs.rmSync(file));
          out.push('', `Removed ${path.relative(context.cwd, file)}: nothing left to import.`);
        }
      }
      // What applying changes in access for this stack's identities: the store as it is → declarations.
      if (plan.access.added.length + plan.access.removed.length + plan.access.changed.length + plan.access.unchanged > 0) {
        const markdown = renderAccessDiffMarkdown(plan.access, { base: `store ${live.address} as it is`, head: `declarations (${stack})` });
        out.push('', highlightMarkdown(markdown.trimEnd(), stylingEnabled(context.isTerminal, context.env)));
      }
      out.push('');
    }
    if (conflicts.length > 0) {
      throw new Error(`nothing written: objects on the store that an import cannot adopt (resolve by hand, then re-run):\n  ${conflicts.join('\n  ')}`);
    }
    writes.forEach((write) => write());
    context.stdout(out.join('\n').trimEnd());
    return ExitCode.ok;
  },
};
