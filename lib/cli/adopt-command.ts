import * as fs from 'fs';
import * as path from 'path';
import { diffAccess } from '../access/access-diff';
import { renderAccessDiffMarkdown } from '../access/access-diff-markdown';
import { AccessModel } from '../access/access-model';
import { DeclaredObject, readDeclaredObjects } from '../access/declared-object';
import { IMPORT_FILE, importBlocks, renderImportFile } from '../access/import-blocks';
import { LiveStore, liveStoreConfiguration } from '../access/live-store-reader';
import { readStoreConfiguration } from '../access/store-configuration';
import { restrict } from '../access/store-drift';
import { PolicyParser } from '../acl/policy-parser';
import { resolveStoreAddress } from '../store/store-address';
import { Command } from './command';
import { parseCommandArguments } from './command-arguments';
import { findEngine, stateAddresses } from './engine-state';
import { ExitCode } from './exit-code';
import { readLiveStoreFromEnvironment } from './live-source';
import { readSynthOutput } from '../access/synth-output';
import { highlightMarkdown, stylingEnabled } from './terminal-highlight';

/** Whether a declared object is on the store, or a conflicting object holds its place. */
function onStore(o: DeclaredObject, live: LiveStore): 'present' | 'absent' | string {
  if (o.kind === 'auth-mount' || o.kind === 'jwt-auth-mount') {
    const mount = live.mounts.find((m) => m.path === o.name);
    if (!mount) return 'absent';
    const want = o.kind === 'jwt-auth-mount' ? String(o.fields.type ?? 'jwt') : String(o.fields.type);
    return mount.type === want ? 'present' : `${o.name}/ is a ${mount.type} mount on the store, declared ${want}: an import would not make it one`;
  }
  if (o.kind === 'jwt-role' || o.kind === 'approle-role') return live.roles.some((r) => r.mount === o.mount && r.role === o.name) ? 'present' : 'absent';
  return live.policies.has(o.name) ? 'present' : 'absent';
}

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
    '  --outdir DIR    synthesized output directory (default cdktf.out)',
    '  --engine BIN    engine binary (default: $SECRETSTORE_IAC_ENGINE, else tofu, else terraform on PATH)',
    '  --dry-run       print the imports and the report, write no file',
    '',
    'Exit codes: 0 done (imports written or none needed), 2 usage error, 3 cannot read the store,',
    'the state or the declarations, or an object on the store that cannot be imported.',
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
    for (const s of stacks) if (!allStacks.includes(s)) throw new Error(`no stack "${s}" in ${outdir}: it has ${allStacks.join(', ')}`);
    const address = resolveStoreAddress(context.env);
    const engine = findEngine(values.engine as string | undefined, context.env);
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
      const state = new Set(stateAddresses(engine, stackDir, { ...context.env, VAULT_ADDR: address }));
      const toImport: DeclaredObject[] = [];
      const toCreate: DeclaredObject[] = [];
      for (const o of declared) {
        if (state.has(o.address)) continue;
        const where = onStore(o, live);
        if (where === 'present') toImport.push(o);
        else if (where === 'absent') toCreate.push(o);
        else conflicts.push(`${stack}: ${o.address}: ${where}`);
      }
      const blocks = importBlocks(toImport);
      const file = path.join(stackDir, IMPORT_FILE);
      out.push(`# Stack ${stack}`, '');
      out.push(`${state.size} resources in state; ${blocks.length} to import; ${toCreate.length} to create.`);
      if (blocks.length > 0) {
        out.push('', 'Import (already on the store, not in state):', ...blocks.map((b) => `  ${b.to}  <-  ${b.id}`));
      }
      if (toCreate.length > 0) out.push('', 'Create (not on the store):', ...toCreate.map((o) => `  ${o.address}  (${o.storePath})`));
      if (values['dry-run'] !== true) {
        if (blocks.length > 0) {
          writes.push(() => fs.writeFileSync(file, renderImportFile(blocks)));
          out.push('', `Wrote ${path.relative(context.cwd, file) || file}.`);
        } else if (fs.existsSync(file)) {
          writes.push(() => fs.rmSync(file));
          out.push('', `Removed ${path.relative(context.cwd, file)}: nothing left to import.`);
        }
      }
      // What applying changes in access for this stack's identities: the store as it is → declarations.
      const names = new Set(declared.filter((o) => o.kind === 'jwt-role' || o.kind === 'approle-role').map((o) => `${o.mount}/${o.name}`));
      if (names.size > 0) {
        const before = await AccessModel.load(restrict(liveStoreConfiguration(live), (n) => names.has(n)), parser);
        const after = await AccessModel.load(restrict(configuration, (n) => names.has(n)), parser);
        const markdown = renderAccessDiffMarkdown(diffAccess(before, after), { base: `store ${live.address} as it is`, head: `declarations (${stack})` });
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
