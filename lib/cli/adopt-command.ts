import * as fs from 'fs';
import * as path from 'path';
import { renderAccessDiffMarkdown } from '../access/access-diff-markdown';
import { planAdoption } from '../reconcile/adoption-plan';
import { readDeclaredKvMounts } from '../reconcile/declared-kv-mount';
import { readDeclaredObjects } from '../reconcile/declared-object';
import { IMPORT_FILE, renderImportFile } from '../reconcile/import-blocks';
import { sealBookkeeping } from '../engine/bookkeeping-seal';
import { readStoreConfiguration } from '../access/store-configuration';
import { readSynthOutput } from '../sources/synth-output';
import { PolicyParser } from '../acl/policy-parser';
import { resolveStoreAddress } from '../store/store-address';
import { Command } from './command';
import { formatOption, parseCommandArguments } from './command-arguments';
import { AdoptionJson, AdoptionJsonStack, adoptionJsonStack, planCheckRefusals } from './adoption-json';
import { DestructionRefused, PlannedDestruction, reviewSavedPlan } from '../engine/replacement-guard';
import { runEngineCollected } from '../engine/engine-output';
import { chooseEngine } from '../engine/engine-binary';
import { providerRecord, refuseUntrustedProviders } from '../engine/installed-providers';
import { placeCommittedLock } from '../engine/provider-lock-files';
import { buildEngineRunEnvironment, droppedVariablesLine, EngineRunEnvironment } from '../engine/engine-run-environment';
import { forgetAddresses, stateAddresses, taintedAddresses, untaintAddresses } from '../engine/engine-state';
import { removeWritingLeftovers, writeFileAtomically } from '../private/atomic-file';
import { makeCheckDirectory, removeCheckDirectory, removeCheckDirectoryLeftovers } from './adopt-check-directory';
import { ExitCode } from './exit-code';
import { guardKvMounts } from '../engine/kv-mount-guard';
import { removeGuardDirectoryLeftovers, temporaryDirectory } from '../engine/guard-directory';
import { liveStoreClient, readLiveStoreFromEnvironment } from './live-source';
import { highlightMarkdown, stylingEnabled } from './terminal-highlight';
import { terminalJson, terminalLine, terminalText } from '../private/terminal-text';
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

export { writeFileAtomically } from '../private/atomic-file';

/**
 * `secretstore-iac adopt [STACK...]`: writes import blocks for declared objects that are on the
 * store but not in the stack's state, and prints what adopting changes in access.
 */
export const adoptCommand: Command = {
  name: 'adopt',
  summary: 'import objects already on the store (hand-made, or left by an interrupted apply) instead of creating them',
  usage: [
    'Usage: secretstore-iac adopt [STACK...] [--outdir DIR] [--engine BIN] [--dry-run] [--no-plan-check] [--format text|json]',
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
    '  --format text|json  text (default), or one JSON object: per stack the imports, creates,',
    '                  untaints, forgets, what is refused (with the fix), the access report and',
    '                  the files written or removed (docs/reference.md); also printed when adopt',
    '                  refuses (exit 3 or 4), before the message on standard error',
    '',
    'Recovery after an interrupted apply (a killed engine, a store or leader lost mid-apply): an',
    'object the state records as tainted (created, then not read back) is untainted when the store',
    'has it (kept and updated in place: an AppRole role keeps its Role ID), and forgotten when the',
    'store does not (the apply creates it); a JWT method the store mounted but never configured is',
    'named with its fix. Then `secretstore-iac tf STACK -- apply` converges.',
    '',
    'Before writing, adopt plans each stack it changes (`ENGINE plan -lock=false` in a directory',
    'of its own beside the stack, then `show -json`; nothing is applied, the provider uses',
    'VAULT_TOKEN without a child token). The import file is moved into the stack directory only',
    'after that check passed: if an object would be destroyed or replaced (an attribute that forces',
    'a replacement differs: a local mount, an OIDC role where a JWT role is declared), adopt names',
    'it, the attribute and the declaration that keeps it, writes no import file (and removes the',
    "stack's old one, whose imports the check refused), and exits 4. A killed adopt leaves no import",
    'file it did not check; what killed runs leave (`*.writing-<pid>` files, `.adopt-check-<pid>-*`',
    'directories, and `$TMPDIR/secretstore-iac-guard-<pid>-*` of a killed `tf --refuse-replace`, of',
    'processes that no longer run) is removed by the next adopt, which says so.',
    '',
    'Exit codes: 0 done (imports written or none needed), 2 usage error, 3 cannot read the store,',
    'the state or the declarations, or an object on the store that cannot be imported, 4 the plan',
    'would destroy or replace an object (nothing written), 5 a declared KV mount does not match the store.',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(
      args,
      { outdir: { type: 'string' }, engine: { type: 'string' }, 'dry-run': { type: 'boolean' }, 'no-plan-check': { type: 'boolean' }, format: { type: 'string' } },
      { min: 0, max: 100, names: 'STACK names' },
    );
    const json = formatOption(values.format, ['text', 'json'] as const, 'text') === 'json';
    const outdir = path.resolve(context.cwd, String(values.outdir ?? 'cdktf.out'));
    const allStacks = readSynthOutput(outdir).map((s) => s.name);
    const stacks = positionals.length > 0 ? [...new Set(positionals)].sort() : allStacks;
    for (const s of stacks) if (!allStacks.includes(s)) throw new UsageError(`no stack "${s}" in ${outdir}: it has ${allStacks.join(', ')}`);
    const dryRun = values['dry-run'] === true;
    const shown = (file: string) => path.relative(context.cwd, file) || file;
    // What killed runs left, in every stack of the output: said first, whatever happens next.
    const leftovers = [
      ...removeCheckDirectoryLeftovers(path.join(outdir, 'stacks'), !dryRun),
      ...allStacks.flatMap((s) => removeWritingLeftovers(path.join(outdir, 'stacks', s), !dryRun)),
    ].map(shown);
    // The guard directories of a killed `tf --refuse-replace` (in the temporary directory: named whole).
    leftovers.push(...removeGuardDirectoryLeftovers(!dryRun, temporaryDirectory(context.env)));
    if (leftovers.length > 0 && !json) {
      context.stdout(
        [
          `${dryRun ? 'Would remove' : 'Removed'} what killed runs left (their process no longer runs; no engine run of a stack reads them):`,
          ...leftovers.map((l) => `  ${terminalLine(l)}`),
          '',
        ].join('\n'),
      );
    }
    const address = resolveStoreAddress(context.env);
    const choice = chooseEngine(values.engine as string | undefined, context.env);
    const engine = choice.path;
    // The engine's environment, built from an allowlist (lib/engine/engine-run-environment.ts).
    const run = buildEngineRunEnvironment(context.env, { address, cwd: context.cwd });
    try {
      const dropped = droppedVariablesLine('adopt', run.dropped);
      if (dropped !== undefined) context.stderr(dropped);
      return await adoptStacks(run);
    } finally {
      run.dispose();
    }
    async function adoptStacks(engineRun: EngineRunEnvironment): Promise<number> {
      const env = engineRun.env;
      // A KV mount of another version makes every declared policy path wrong: stop before any import.
      // The namespace the stacks are applied to is the one to read (or VAULT_NAMESPACE, if it agrees).
      const namespaces = readSynthOutput(outdir).filter((s) => stacks.includes(s.name)).map((s) => s.namespace);
      if (!(await guardKvMounts('adopt', liveStoreClient(context, namespaces), readDeclaredKvMounts(outdir, stacks), (l) => context.stderr(l)))) return ExitCode.kvMountMismatch;
      const live = await readLiveStoreFromEnvironment(context, namespaces);
      const configuration = readStoreConfiguration(outdir);
      const parser = new PolicyParser();
      const out: string[] = [];
      const conflicts: string[] = [];
      // Nothing is changed until every stack was read without conflict.
      const pending: PendingStack[] = [];
      // With --format json standard output holds one JSON object, printed once adopt is done or refuses.
      const reports = new Map<string, AdoptionJsonStack & { files: AdoptionJsonStack['files'][number][]; refused: AdoptionJsonStack['refused'][number][] }>();
      const planChecked: string[] = [];
      const printJson = () => {
        const report: AdoptionJson = { command: 'adopt', dryRun, leftovers: [...leftovers], stacks: [...reports.values()], planChecked };
        context.stdout(terminalJson(report));
      };
      const fileChange = (stack: string, file: string, action: 'written' | 'removed') => reports.get(stack)?.files.push({ path: shown(file), action });
      for (const stack of stacks) {
        const stackDir = path.join(outdir, 'stacks', stack);
        // The providers adopt's engine runs start (its plan check) are the builds the tool installed.
        const providers = providerRecord(stackDir, context.env);
        if (providers !== undefined) {
          placeCommittedLock(stackDir);
          refuseUntrustedProviders(stackDir, stack, providers);
        }
        const declared = readDeclaredObjects(outdir, stack);
        const damaged: string[] = [];
        const file = path.join(stackDir, IMPORT_FILE);
        // adopt's own file, left damaged by a killed run of an older version: the engine would refuse the whole directory.
        if (importFileDamaged(file)) {
          fs.rmSync(file, { force: true });
          damaged.push(file);
          out.push(`Removed a damaged ${IMPORT_FILE} (not the JSON adopt writes; left by an interrupted run); it is written again below if needed.`, '');
        }
        const state = new Set(stateAddresses(engine, stackDir, env));
        const tainted = new Set(state.size > 0 ? taintedAddresses(engine, stackDir, env) : []);
        const plan = await planAdoption(stack, declared, configuration, live, state, parser, tainted);
        conflicts.push(...plan.conflicts.map((c) => `${stack}: ${terminalLine(c)}`));
        const report = adoptionJsonStack(plan);
        reports.set(stack, { ...report, files: [], refused: [...report.refused] });
        damaged.forEach((f) => fileChange(stack, f, 'removed'));
        out.push(`# Stack ${stack}`, '');
        out.push(`${plan.inState} resources in state; ${plan.imports.length} to import; ${plan.creates.length} to create.`);
        if (plan.untaints.length + plan.forgets.length + plan.taintedUndeclared.length > 0) {
          out.push(`${tainted.size} tainted in state (left by an interrupted apply): ${plan.untaints.length} to untaint; ${plan.forgets.length} to forget.`);
        }
        if (plan.imports.length > 0) {
          out.push('', 'Import (already on the store, not in state):', ...plan.imports.map((b) => `  ${terminalLine(b.to)}  <-  ${terminalLine(b.id)}`));
        }
        if (plan.untaints.length > 0) {
          out.push('', 'Untaint (tainted in state, on the store: kept and updated in place, not replaced):', ...plan.untaints.map((o) => `  ${terminalLine(o.address)}  (${terminalLine(o.storePath)})`));
        }
        if (plan.forgets.length > 0) {
          out.push('', 'Forget (tainted in state, not on the store: the apply creates it):', ...plan.forgets.map((o) => `  ${terminalLine(o.address)}  (${terminalLine(o.storePath)})`));
        }
        if (plan.taintedUndeclared.length > 0) {
          out.push('', 'Tainted in state and no longer declared (left as they are: a plan destroys them):', ...plan.taintedUndeclared.map((a) => `  ${terminalLine(a)}`));
        }
        const forgotten = new Set(plan.forgets.map((o) => o.address));
        const creates = plan.creates.filter((o) => !forgotten.has(o.address));
        if (creates.length > 0) out.push('', 'Create (not on the store):', ...creates.map((o) => `  ${terminalLine(o.address)}  (${terminalLine(o.storePath)})`));
        // Attributes the access report does not show, each with what the apply does with it.
        if (plan.risks.length > 0) {
          out.push('', `Risk: applying the imports would destroy ${plan.risks.length === 1 ? 'an object' : `${plan.risks.length} objects`} (the plan check refuses it):`, ...plan.risks.map((l) => `  ${terminalLine(l)}`));
        }
        if (plan.attributeChanges.length > 0) {
          out.push('', 'Mount settings, store → declarations (no replacement):', ...plan.attributeChanges.map((l) => `  ${terminalLine(l)}`));
        }
        const importText = plan.imports.length > 0 ? renderImportFile(plan.imports) : undefined;
        pending.push({ stack, stackDir, file, importText, removeFile: importText === undefined && fs.existsSync(file), untaints: plan.untaints.map((o) => o.address), forgets: plan.forgets.map((o) => o.address) });
        // What applying changes in access for this stack's identities: the store as it is → declarations.
        if (plan.access.added.length + plan.access.removed.length + plan.access.changed.length + plan.access.unchanged > 0) {
          const markdown = renderAccessDiffMarkdown(plan.access, { base: `store ${live.address} as it is`, head: `declarations (${stack})` });
          // The report quotes the store's text: escaped before the library adds its own styling.
          out.push('', highlightMarkdown(terminalText(markdown.trimEnd()), stylingEnabled(context.isTerminal, context.env)));
        }
        out.push('');
      }
      if (conflicts.length > 0) {
        if (json) printJson();
        throw new Error(`nothing written: objects on the store that an import cannot adopt (resolve by hand, then re-run):\n  ${conflicts.join('\n  ')}`);
      }
      if (dryRun) {
        if (json) printJson();
        else context.stdout(out.join('\n').trimEnd());
        return ExitCode.ok;
      }
      // The state first: a tainted object the store has is a fact, true whatever the check says.
      for (const p of pending) {
        untaintAddresses(engine, p.stackDir, env, p.untaints);
        forgetAddresses(engine, p.stackDir, env, p.forgets);
        if (p.untaints.length + p.forgets.length > 0) out.push(`State of ${p.stack}: untainted ${p.untaints.length}, forgot ${p.forgets.length}.`);
      }
      const toCheck = values['no-plan-check'] === true ? [] : pending.filter((p) => p.importText !== undefined || p.untaints.length + p.forgets.length > 0);
      const checked = new Map<string, string>();
      const destructions: PlannedDestruction[] = [];
      const refused = new Set<string>();
      try {
        for (const p of toCheck) {
          const dir = makeCheckDirectory(p.stackDir, p.importText);
          checked.set(p.stack, dir);
          // TF_DATA_DIR never reaches the engine (lib/engine/engine-run-environment.ts): the links give the stack's `.terraform`.
          const found = checkPlanDestructions(engine, dir, p.stack, { ...env, TERRAFORM_VAULT_SKIP_CHILD_TOKEN: 'true' });
          if (found.length > 0) refused.add(p.stack);
          reports.get(p.stack)?.refused.push(...planCheckRefusals(found, p.stack));
          destructions.push(...found);
        }
      } catch (error) {
        for (const dir of checked.values()) removeCheckDirectory(dir);
        throw new Error(`imports not written: planning them failed (use a token that may plan, see docs/adoption.md, or --no-plan-check): ${(error as Error).message}`);
      }
      if (destructions.length > 0) {
        for (const dir of checked.values()) removeCheckDirectory(dir);
        // An import file already there would make a plain apply import what the check refused.
        for (const p of pending) {
          if (!refused.has(p.stack) || !fs.existsSync(p.file)) continue;
          fs.rmSync(p.file, { force: true });
          fileChange(p.stack, p.file, 'removed');
          out.push(`Removed ${shown(p.file)}: its imports lead to the plan the check refused.`);
        }
        if (json) printJson();
        else context.stdout(out.join('\n').trimEnd());
        throw new DestructionRefused(destructions, 'nothing written (no import file written)');
      }
      for (const p of pending) {
        const dir = checked.get(p.stack);
        if (p.importText !== undefined) {
          // Checked: moved into place (same file system, one rename); else written the same way.
          if (dir !== undefined) fs.renameSync(path.join(dir, IMPORT_FILE), p.file);
          else writeFileAtomically(p.file, p.importText);
          sealBookkeeping(p.stackDir, { [IMPORT_FILE]: p.importText }, false);
          fileChange(p.stack, p.file, 'written');
          out.push(`Wrote ${shown(p.file)}.`);
        } else if (p.removeFile) {
          fs.rmSync(p.file, { force: true });
          sealBookkeeping(p.stackDir, { [IMPORT_FILE]: undefined }, false);
          fileChange(p.stack, p.file, 'removed');
          out.push(`Removed ${shown(p.file)}: nothing left to import.`);
        }
        if (dir !== undefined) removeCheckDirectory(dir);
      }
      if (toCheck.length > 0) out.push(`Plan check: applying the imports destroys and replaces nothing (${toCheck.map((p) => p.stack).join(', ')}).`);
      planChecked.push(...toCheck.map((p) => p.stack));
      if (json) printJson();
      else context.stdout(out.join('\n').trimEnd());
      return ExitCode.ok;
    }
  },
};

/** What adopt changes for one stack once every stack was read without conflict. */
interface PendingStack {
  readonly stack: string;
  readonly stackDir: string;
  /** The stack's import file. */
  readonly file: string;
  /** The new import file, when there is anything to import. */
  readonly importText?: string;
  /** Whether the old import file goes (nothing left to import). */
  readonly removeFile: boolean;
  /** Tainted addresses to untaint (the store has the object). */
  readonly untaints: readonly string[];
  /** Tainted addresses to forget (the store does not have the object). */
  readonly forgets: readonly string[];
}

/**
 * Plans in a check directory (the plan file stays inside it) and returns what the plan destroys or
 * replaces. A destroyed object declared in this same stack did not move: the check directory's
 * name is not the stack's, so the review's "declared in another stack" is undone for it.
 * @throws Error with the engine's message when the plan fails
 */
function checkPlanDestructions(engine: string, dir: string, stack: string, env: NodeJS.ProcessEnv): PlannedDestruction[] {
  const planFile = 'adopt-check.tfplan';
  const planned = runEngineCollected(engine, ['plan', '-input=false', '-lock=false', `-out=${planFile}`], dir, env);
  if (planned.status !== 0) {
    throw new Error(`\`${path.basename(engine)} plan\` failed for ${stack} (exit ${planned.status}): ${planned.said.split('\n').filter(Boolean).slice(0, 8).join(' ')}`);
  }
  return reviewSavedPlan(engine, dir, env, planFile).destructions.map((d) => (d.declaredInStack === stack ? { ...d, declaredInStack: undefined } : d));
}
