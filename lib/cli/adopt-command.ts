import * as fs from 'fs';
import * as path from 'path';
import { renderAccessDiffMarkdown } from '../access/access-diff-markdown';
import { planAdoption } from '../reconcile/adoption-plan';
import { readDeclaredKvMounts } from '../reconcile/declared-kv-mount';
import { readDeclaredObjects } from '../reconcile/declared-object';
import { IMPORT_FILE, renderImportFile } from '../reconcile/import-blocks';
import { readStoreConfiguration } from '../access/store-configuration';
import { readSynthOutput } from '../sources/synth-output';
import { PolicyParser } from '../acl/policy-parser';
import { resolveStoreAddress } from '../store/store-address';
import { Command } from './command';
import { parseCommandArguments } from './command-arguments';
import { DestructionRefused, PlannedDestruction, planDestructions } from '../engine/replacement-guard';
import { chooseEngine, engineEnvironment } from '../engine/engine-binary';
import { stateAddresses } from '../engine/engine-state';
import { ExitCode } from './exit-code';
import { guardKvMounts } from '../engine/kv-mount-guard';
import { liveStoreClient, readLiveStoreFromEnvironment } from './live-source';
import { highlightMarkdown, stylingEnabled } from './terminal-highlight';
import { terminalLine, terminalText } from '../private/terminal-text';
import { UsageError } from './usage-error';

/** A file's bytes, or undefined when there is none (or it is not a regular file). */
function readIfFile(file: string): Buffer | undefined {
  try {
    return fs.lstatSync(file).isFile() ? fs.readFileSync(file) : undefined;
  } catch {
    return undefined;
  }
}

/** True when the import file exists but is not the JSON object with an `import` list that adopt writes. */
function importFileDamaged(file: string): boolean {
  const content = readIfFile(file);
  if (content === undefined) return false;
  try {
    return !Array.isArray(JSON.parse(content.toString('utf8'))?.import);
  } catch {
    return true;
  }
}

/** Puts each stack's import file back as it was before this run. */
function restore(outdir: string, before: ReadonlyMap<string, Buffer | undefined>): void {
  for (const [stack, content] of before) {
    const file = path.join(outdir, 'stacks', stack, IMPORT_FILE);
    if (content === undefined) fs.rmSync(file, { force: true });
    else writeFileAtomically(file, content);
  }
}

/**
 * Writes a file by writing a temporary file beside it and renaming it over the target, so that a
 * killed `adopt` leaves the old file or the new one, never a half-written one (which would make
 * every later `init`, plan and adopt fail). The temporary name does not end in `.tf.json`: the
 * engine never reads it.
 */
export function writeFileAtomically(file: string, content: string | Buffer): void {
  const temporary = `${file}.writing-${process.pid}`;
  try {
    fs.writeFileSync(temporary, content, { mode: 0o644 });
    fs.renameSync(temporary, file);
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/**
 * `secretstore-iac adopt [STACK...]`: writes import blocks for declared objects that are on the
 * store but not in the stack's state, and prints what adopting changes in access.
 */
export const adoptCommand: Command = {
  name: 'adopt',
  summary: 'import objects already on the store (hand-made, or left by an interrupted apply) instead of creating them',
  usage: [
    'Usage: secretstore-iac adopt [STACK...] [--outdir DIR] [--engine BIN] [--dry-run] [--no-plan-check]',
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
    'all stops it with exit 5 and the contradictions, before any file is written.',
    '',
    '  --outdir DIR    synthesized output directory (default cdktf.out)',
    '  --engine BIN    engine binary (default: $SECRETSTORE_IAC_ENGINE, else $SECRETSTORE_IAC_TOFU,',
    '                  else the OpenTofu npm run toolchain built, else tofu, else terraform on PATH)',
    '  --dry-run       print the imports and the report, write no file',
    '  --no-plan-check do not plan the stacks after writing the imports (see below)',
    '',
    'After writing the imports, adopt plans each stack it wrote imports for (`ENGINE plan` into a',
    'temporary file, then `show -json`; nothing is applied, the provider uses VAULT_TOKEN without a',
    'child token). If an object would be destroyed or replaced (an attribute that forces a',
    'replacement differs: a local mount, an OIDC role where a JWT role is declared), adopt names it,',
    'the attribute and the declaration that keeps it, puts the import files back as they were, and',
    'exits 4.',
    '',
    'Exit codes: 0 done (imports written or none needed), 2 usage error, 3 cannot read the store,',
    'the state or the declarations, or an object on the store that cannot be imported, 4 the plan',
    'would destroy or replace an object (nothing written), 5 a declared KV mount does not match the store.',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(
      args,
      { outdir: { type: 'string' }, engine: { type: 'string' }, 'dry-run': { type: 'boolean' }, 'no-plan-check': { type: 'boolean' } },
      { min: 0, max: 100, names: 'STACK names' },
    );
    const outdir = path.resolve(context.cwd, String(values.outdir ?? 'cdktf.out'));
    const allStacks = readSynthOutput(outdir).map((s) => s.name);
    const stacks = positionals.length > 0 ? [...new Set(positionals)].sort() : allStacks;
    for (const s of stacks) if (!allStacks.includes(s)) throw new UsageError(`no stack "${s}" in ${outdir}: it has ${allStacks.join(', ')}`);
    const address = resolveStoreAddress(context.env);
    const choice = chooseEngine(values.engine as string | undefined, context.env);
    const engine = choice.path;
    // A KV mount of another version makes every declared policy path wrong: stop before any import.
    // The namespace the stacks are applied to is the one to read (or VAULT_NAMESPACE, if it agrees).
    const namespaces = readSynthOutput(outdir).filter((s) => stacks.includes(s.name)).map((s) => s.namespace);
    if (!(await guardKvMounts('adopt', liveStoreClient(context, namespaces), readDeclaredKvMounts(outdir, stacks), (l) => context.stderr(l)))) return ExitCode.kvMountMismatch;
    const live = await readLiveStoreFromEnvironment(context, namespaces);
    const configuration = readStoreConfiguration(outdir);
    const parser = new PolicyParser();
    const out: string[] = [];
    const conflicts: string[] = [];
    // Files are written only once every stack was read without conflict: nothing half-written.
    const writes: Array<() => void> = [];
    const written: string[] = [];
    for (const stack of stacks) {
      const stackDir = path.join(outdir, 'stacks', stack);
      const declared = readDeclaredObjects(outdir, stack);
      // adopt's own file, left damaged by a killed run: the engine would refuse the whole directory.
      if (importFileDamaged(path.join(stackDir, IMPORT_FILE))) {
        fs.rmSync(path.join(stackDir, IMPORT_FILE), { force: true });
        out.push(`Removed a damaged ${IMPORT_FILE} (not the JSON adopt writes; left by an interrupted run); it is written again below if needed.`, '');
      }
      const state = new Set(stateAddresses(engine, stackDir, engineEnvironment(context.env, address, choice)));
      const plan = await planAdoption(stack, declared, configuration, live, state, parser);
      conflicts.push(...plan.conflicts.map((c) => `${stack}: ${terminalLine(c)}`));
      const file = path.join(stackDir, IMPORT_FILE);
      out.push(`# Stack ${stack}`, '');
      out.push(`${plan.inState} resources in state; ${plan.imports.length} to import; ${plan.creates.length} to create.`);
      if (plan.imports.length > 0) {
        out.push('', 'Import (already on the store, not in state):', ...plan.imports.map((b) => `  ${terminalLine(b.to)}  <-  ${terminalLine(b.id)}`));
      }
      if (plan.creates.length > 0) out.push('', 'Create (not on the store):', ...plan.creates.map((o) => `  ${terminalLine(o.address)}  (${terminalLine(o.storePath)})`));
      // Attributes the access report does not show, each with what the apply does with it.
      if (plan.risks.length > 0) {
        out.push('', `Risk: applying the imports would destroy ${plan.risks.length === 1 ? 'an object' : `${plan.risks.length} objects`} (the plan check refuses it):`, ...plan.risks.map((l) => `  ${terminalLine(l)}`));
      }
      if (plan.attributeChanges.length > 0) {
        out.push('', 'Mount settings, store → declarations (no replacement):', ...plan.attributeChanges.map((l) => `  ${terminalLine(l)}`));
      }
      if (values['dry-run'] !== true) {
        if (plan.imports.length > 0) {
          writes.push(() => writeFileAtomically(file, renderImportFile(plan.imports)));
          written.push(stack);
          out.push('', `Wrote ${path.relative(context.cwd, file) || file}.`);
        } else if (fs.existsSync(file)) {
          writes.push(() => fs.rmSync(file, { force: true }));
          out.push('', `Removed ${path.relative(context.cwd, file)}: nothing left to import.`);
        }
      }
      // What applying changes in access for this stack's identities: the store as it is → declarations.
      if (plan.access.added.length + plan.access.removed.length + plan.access.changed.length + plan.access.unchanged > 0) {
        const markdown = renderAccessDiffMarkdown(plan.access, { base: `store ${live.address} as it is`, head: `declarations (${stack})` });
        // The report quotes the store's text: escaped before the library adds its own styling.
        out.push('', highlightMarkdown(terminalText(markdown.trimEnd()), stylingEnabled(context.isTerminal, context.env)));
      }
      out.push('');
    }
    if (conflicts.length > 0) {
      throw new Error(`nothing written: objects on the store that an import cannot adopt (resolve by hand, then re-run):\n  ${conflicts.join('\n  ')}`);
    }
    // Kept to put back if the plan check refuses: the files as they were before this run.
    const before = new Map(stacks.map((s) => [s, readIfFile(path.join(outdir, 'stacks', s, IMPORT_FILE))]));
    writes.forEach((write) => write());
    if (values['dry-run'] !== true && values['no-plan-check'] !== true && written.length > 0) {
      const destructions: PlannedDestruction[] = [];
      try {
        for (const stack of written) {
          const env = { ...engineEnvironment(context.env, address, choice), TERRAFORM_VAULT_SKIP_CHILD_TOKEN: 'true' };
          destructions.push(...planDestructions(engine, path.join(outdir, 'stacks', stack), env));
        }
      } catch (error) {
        restore(outdir, before);
        throw new Error(`imports not written: planning them failed (use a token that may plan, see docs/adoption.md, or --no-plan-check): ${(error as Error).message}`);
      }
      if (destructions.length > 0) {
        restore(outdir, before);
        context.stdout(out.join('\n').trimEnd());
        throw new DestructionRefused(destructions, 'nothing written (import files put back as they were)');
      }
      out.push(`Plan check: applying the imports destroys and replaces nothing (${written.join(', ')}).`);
    }
    context.stdout(out.join('\n').trimEnd());
    return ExitCode.ok;
  },
};
