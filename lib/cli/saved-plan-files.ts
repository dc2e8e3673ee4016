import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REVIEWED_ATTRIBUTES } from '../access/store-configuration';
import { chooseEngine } from '../engine/engine-binary';
import { buildEngineRunEnvironment } from '../engine/engine-run-environment';
import { runEngineCollected } from '../engine/engine-output';
import { compareStrings } from '../private/compare-strings';
import { planDigest, readSavedPlan, SavedPlan } from '../sources/saved-plan';
import { resolveStoreAddress } from '../store/store-address';
import { fileErrorText } from '../private/file-error-text';
import { CommandContext } from './command';
import { inputFilePath, optionValueText } from './input-file';
import { UsageError } from './usage-error';

/** A saved plan named on the command line, before it is read. */
export interface SavedPlanFile {
  /** The stack it plans. */
  readonly stack: string;
  /** The file, absolute. */
  readonly file: string;
  /** True for the JSON of `show -json` (`.json`), false for a plan file the engine shows. */
  readonly json: boolean;
  /** The `--plan STACK=FILE` that named it; absent for a file found in `--plans DIR`. */
  readonly given?: string;
}

/** Suffix of a saved plan file in a plans directory (the configuration pipeline's `<stack>.tfplan`). */
export const PLAN_FILE_SUFFIX = '.tfplan';
/** Suffix of the JSON of `show -json` of a plan, in a plans directory. */
export const PLAN_JSON_SUFFIX = '.tfplan.json';

/** A stack name as the synthesis writes it: no path separator, no `..`. */
const STACK_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/**
 * The saved plans `--plan STACK=FILE` (repeated) and `--plans DIR` name: in DIR, every
 * `<stack>.tfplan` and `<stack>.tfplan.json`; a FILE ending in `.json` is the JSON of `show -json`.
 * @throws UsageError for a malformed `--plan`, a stack name that is not one, a missing file, or two plans of one stack
 */
export function savedPlanFiles(plan: readonly string[], plansDir: string | undefined, cwd: string): SavedPlanFile[] {
  const out: SavedPlanFile[] = [];
  for (const given of plan) {
    const eq = given.indexOf('=');
    if (eq <= 0 || eq === given.length - 1) throw new UsageError(`--plan takes STACK=FILE, not ${JSON.stringify(given)}`);
    const file = path.resolve(cwd, given.slice(eq + 1));
    out.push({ stack: given.slice(0, eq), file, json: file.endsWith('.json'), given: `--plan ${given}` });
  }
  if (plansDir !== undefined) {
    const dir = path.resolve(cwd, plansDir);
    const named = optionValueText('--plans', plansDir);
    if (plansDir === '') throw new UsageError(`${named}: an empty path; give the directory of the saved plans (<stack>${PLAN_FILE_SUFFIX})`);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`${named}: no such directory; give the directory of the saved plans (<stack>${PLAN_FILE_SUFFIX})`);
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch (e) {
      throw new UsageError(`${named}: the directory cannot be listed (${fileErrorText(e)}); run as a user who may read it`);
    }
    for (const name of names.sort(compareStrings)) {
      const json = name.endsWith(PLAN_JSON_SUFFIX);
      if (!json && !name.endsWith(PLAN_FILE_SUFFIX)) continue;
      out.push({ stack: name.slice(0, -(json ? PLAN_JSON_SUFFIX : PLAN_FILE_SUFFIX).length), file: path.join(dir, name), json });
    }
    if (out.length === 0) throw new UsageError(`--plans ${plansDir}: no <stack>${PLAN_FILE_SUFFIX} or <stack>${PLAN_JSON_SUFFIX} in it`);
  }
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const p of out) {
    if (!STACK_NAME.test(p.stack) || p.stack === '..') problems.push(`${JSON.stringify(p.stack)} is not a stack name (letters, digits, _ . -; no path)`);
    try {
      inputFilePath({ option: '--plan', given: p.file, shown: `stack ${p.stack}: ${p.given ?? `plan file ${p.file}`}`, what: `the saved plan of stack ${p.stack}` }, cwd);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      problems.push(e.message);
    }
    const other = seen.get(p.stack);
    if (other !== undefined) problems.push(`stack ${p.stack} has two plans (${other}, ${p.file}): give one per stack`);
    seen.set(p.stack, p.file);
  }
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return out.sort((a, b) => compareStrings(a.stack, b.stack));
}

/**
 * Reads saved plans: a plan file is shown with `ENGINE show -json` in its stack's directory of the
 * synthesized output (the engine `tf` runs, its environment, without the `TF_CLI_ARGS*` that would
 * add arguments to `show`); a JSON file is read as it is. The digest is the file's own.
 * @throws UsageError naming a stack the output has no directory for; Error naming the stack and file
 *   when the engine cannot show it or the JSON is not a plan's
 */
export function readSavedPlanFiles(files: readonly SavedPlanFile[], outdir: string, engineWanted: string | undefined, context: CommandContext): SavedPlan[] {
  let show: EngineShow | undefined;
  // A plan of a stack the output has no directory for is a misnamed stack, not a new one.
  const unknown = files.filter((f) => !fs.existsSync(path.join(outdir, 'stacks', f.stack)));
  if (unknown.length > 0) {
    throw new UsageError(`${unknown.map((f) => `stack ${f.stack} (${f.file})`).join(', ')}: no such stack in ${outdir} (no stacks/<stack> directory): name the stack the plan is of, or pass --outdir`);
  }
  try {
    return files.map((f) => readOne(f));
  } finally {
    show?.dispose();
  }
  function readOne(f: SavedPlanFile): SavedPlan {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(f.file);
    } catch (e) {
      throw new UsageError(`stack ${f.stack}: the saved plan ${f.file} cannot be read (${fileErrorText(e)})`);
    }
    const sha256 = planDigest(bytes);
    let text: string;
    if (f.json) text = bytes.toString('utf8');
    else {
      show ??= engineShow(engineWanted, context);
      const stackDir = path.join(outdir, 'stacks', f.stack);
      // The engine shows a private copy of the bytes digested: the file cannot change in between.
      const copyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'secretstore-iac-plan-'));
      try {
        const copy = path.join(copyDir, 'reviewed.tfplan');
        fs.writeFileSync(copy, bytes, { mode: 0o600 });
        text = show.show(stackDir, copy);
      } catch (e) {
        throw new Error(`${f.file} (stack ${f.stack}): ${(e as Error).message}`);
      } finally {
        fs.rmSync(copyDir, { recursive: true, force: true });
      }
    }
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (e) {
      throw new Error(`${f.file} (stack ${f.stack}): not JSON: ${(e as Error).message}`);
    }
    return readSavedPlan(document, f.stack, path.relative(context.cwd, f.file) || f.file, sha256, REVIEWED_ATTRIBUTES);
  }
}

/** `ENGINE show -json FILE` in a stack directory, and the end of its engine run. */
interface EngineShow {
  show(stackDir: string, file: string): string;
  dispose(): void;
}

/** `ENGINE show -json FILE` in a stack directory, with the engine and environment of `tf`. */
function engineShow(engineWanted: string | undefined, context: CommandContext): EngineShow {
  const choice = chooseEngine(engineWanted, context.env);
  // `show` talks to no store: an address is passed on when set, not required.
  let address: string;
  try {
    address = resolveStoreAddress(context.env);
  } catch {
    address = context.env.VAULT_ADDR ?? '';
  }
  // The review reads exactly the file named: TF_CLI_ARGS* never reach the engine (an allowlist).
  const run = buildEngineRunEnvironment(context.env, { address, cwd: context.cwd });
  const env = run.env;
  const show = (stackDir: string, file: string): string => {
    // A saved plan carries its configuration: the directory's files are not read, so a plan made
    // from a directory `tf` refuses is still reviewed (it is what an apply of it would do).
    const shown = runEngineCollected(choice.path, ['show', '-json', file], stackDir, env, { readsConfiguration: false });
    if (shown.status !== 0) throw new Error(`cannot read the plan with \`${path.basename(choice.path)} show -json\` in ${stackDir} (exit ${shown.status}; run \`secretstore-iac tf STACK -- init\` there first): ${shown.said.split('\n').slice(0, 5).join(' ')}`);
    return shown.stdout;
  };
  return { show, dispose: () => run.dispose() };
}
