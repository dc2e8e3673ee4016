import * as fs from 'fs';
import * as path from 'path';
import { deadProcessLeftovers } from '../private/dead-process-leftovers';
import { processRunning } from '../private/process-running';
import { filesDigest } from '../sources/stack-digest';
import { bookkeepingProblems, SEAL_FILE } from './bookkeeping-seal';
import { PROVIDER_LOCK_FILE } from './provider-lock-files';
import { COPIED_ENGINE_RECORDS, ENGINE_DATA_DIR, engineRecordProblems } from './engine-records';
import { isEngineData, TRUSTED_ENGINE_FILES, UntrustedStackDirectory } from './stack-directory-guard';

/**
 * The folder, beside the output's `stacks/` (`<outdir>/.secretstore-iac-engine-runs/`), holding the
 * fresh working directories of the engine runs under way. At the depth of a stack directory below
 * the output, so that a relative path of the configuration (the local backend's
 * `../../../terraform.<stack>.tfstate`) names the same file from there; outside `stacks/`, which the
 * pipeline's steps list as the stacks. A synthesis removes what it finds there (everything outside
 * `stacks/` is the synthesis's: lib/constructs/output-update.ts).
 */
export const ENGINE_RUNS_DIR = '.secretstore-iac-engine-runs';

/** A fresh working directory's name: `<pid>-<stack>-XXXXXX` (the pid tells a killed run's leftover). */
const RUN_NAME = /^(\d+)-/;

/** The configuration an engine run lays: the files and the digest of what they hold. */
export interface LaidConfiguration {
  /** The files laid (the synthesis's `cdk.tf.json`, the tool's sealed bookkeeping and its seal), sorted. */
  readonly files: readonly string[];
  /** `sha256:` over the files' names, lengths and bytes: the stack's digest as `changed-stacks` computes it (lib/sources/stack-digest.ts). */
  readonly digest: string;
}

/** A fresh working directory laid for one engine start ({@link layEngineWorkingDirectory}). */
export interface EngineWorkingDirectory {
  /** The directory to start the engine in. */
  readonly dir: string;
  /** The engine's arguments, with a relative path through the stack directory's parent (`../x`) naming the same file from {@link dir}. */
  readonly args: readonly string[];
  /** What was laid of the configuration (nothing for a run that reads none). */
  readonly laid: LaidConfiguration;
  /**
   * Brings the engine's data back into the stack directory (a new or changed lock file, new saved
   * plans and removals lists, a new `.terraform/`, state backups, `errored.tfstate`, `crash.log`),
   * discards everything else the engine left, and removes the directory. Call it once, whatever
   * the run's outcome.
   */
  finish(): void;
}

/**
 * The configuration files of a stack directory as an engine run lays them, each read once: the
 * synthesis's `cdk.tf.json`, the tool's bookkeeping ({@link TRUSTED_ENGINE_FILES}) and its seal, the
 * regular files present. After the stack-directory guard passed, these are all the directory's
 * digested files, so their digest is the stack's.
 */
export function readLaidConfiguration(stackDir: string): { readonly files: ReadonlyArray<{ readonly name: string; readonly bytes: Buffer }>; readonly laid: LaidConfiguration } {
  const files: { name: string; bytes: Buffer }[] = [];
  for (const name of [...TRUSTED_ENGINE_FILES, SEAL_FILE].sort()) {
    let bytes: Buffer;
    try {
      if (!fs.statSync(path.join(stackDir, name)).isFile()) continue;
      bytes = fs.readFileSync(path.join(stackDir, name));
    } catch {
      continue;
    }
    files.push({ name, bytes });
  }
  return { files, laid: { files: files.map((f) => f.name), digest: filesDigest(files) } };
}

/** The line part naming what a run lays (`configuration: 2 files laid fresh, sha256:…`), for the engine line. */
export function laidConfigurationText(laid: LaidConfiguration): string {
  return `configuration: ${laid.files.length} file${laid.files.length === 1 ? '' : 's'} laid fresh, ${laid.digest}`;
}

/**
 * Rewrites a relative path argument through the stack directory's parent (`../other/x.tfplan`, or an
 * option's value, `-out=../x.tfplan`) to the same file from the fresh directory
 * (`../../stacks/other/x.tfplan`): from there `..` is the runs folder. A bare name (`x.tfplan`)
 * stays: it is laid in and brought back; `../../` and above are the same from both.
 */
function rebasedArgument(arg: string, stackDir: string, dir: string): string {
  const rebase = (p: string): string => {
    const parts = p.split('/');
    if (path.isAbsolute(p) || parts[0] !== '..' || parts.length < 2 || parts[1] === '..' || parts[1] === '') return p;
    return path.relative(dir, path.resolve(stackDir, p));
  };
  const option = /^(--?[A-Za-z][A-Za-z0-9-]*=)(.*)$/s.exec(arg);
  return option ? `${option[1]}${rebase(option[2])}` : rebase(arg);
}

/** The runs folder's leftovers: directories of this user named by a pid that no longer runs. */
function removeLeftovers(runs: string): void {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const notOurs = (file: string) => {
    try {
      const stat = fs.lstatSync(file);
      return !stat.isDirectory() || (uid !== undefined && stat.uid !== uid);
    } catch {
      return true;
    }
  };
  // Links only inside: removing one never touches what it points to.
  for (const dir of deadProcessLeftovers(runs, RUN_NAME, processRunning, notOurs)) fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Makes a run's directory in the runs folder (made too when missing; a killed run's leftovers
 * removed first). Another run ending at the same moment may remove the folder between the two: made
 * again then.
 * @throws Error naming the folder when it cannot be made
 */
function makeRunDirectory(runs: string, prefix: string): string {
  for (let attempt = 0; ; attempt++) {
    try {
      fs.mkdirSync(runs, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot make the engine's working directory in ${runs} (the engine runs in a fresh directory beside the stacks): ${(e as Error).message}`);
    }
    if (attempt === 0) removeLeftovers(runs);
    try {
      const dir = fs.mkdtempSync(path.join(runs, prefix));
      fs.chmodSync(dir, 0o700);
      return dir;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw new Error(`cannot make the engine's working directory in ${runs}: ${(e as Error).message}`);
    }
  }
}

/**
 * Lays a fresh working directory for one engine start from the stack directory `stackDir`, so that
 * the engine can read no other file of it (issue 45, "a hermetic engine run"), in
 * `<outdir>/.secretstore-iac-engine-runs/<pid>-<stack>-XXXXXX` (mode 0700; {@link ENGINE_RUNS_DIR}):
 * - the configuration ({@link readLaidConfiguration}) is copied: each file read once, and the
 *   bookkeeping checked against its seal on the copies themselves, the bytes the engine reads
 *   (a file that changed since the guard, with or without its seal, is refused);
 * - the engine's data ({@link isEngineData}) is linked: saved plans, removals lists and local state
 *   files; `.terraform/` is a directory of its own, its records (backend configuration, workspace)
 *   copied and checked against the laid `cdk.tf.json` ({@link engineRecordProblems}), its
 *   providers and modules linked; the lock file is copied (the engine replaces it by a rename,
 *   which would replace a link) and brought back when the run changed it ({@link EngineWorkingDirectory.finish});
 * - nothing else: an override or variables file, `tests/`, a file added after the guard passed.
 * @param readsConfiguration false for `show -json PLANFILE` (a saved plan carries its configuration):
 *   only the engine's data is laid
 * @throws UntrustedStackDirectory (exit 4) when a copied bookkeeping file is not what the tool
 *   wrote (nothing is started; the directory is removed); Error when the directory cannot be made
 */
export function layEngineWorkingDirectory(given: string, args: readonly string[], readsConfiguration = true): EngineWorkingDirectory {
  // Absolute: the links laid point to it.
  const stackDir = path.resolve(given);
  const runs = path.join(path.dirname(path.dirname(stackDir)), ENGINE_RUNS_DIR);
  const dir = makeRunDirectory(runs, `${process.pid}-${path.basename(stackDir)}-`);
  const removeDir = () => {
    fs.rmSync(dir, { recursive: true, force: true });
    // The folder goes with its last run (another run's directory keeps it).
    try {
      fs.rmdirSync(runs);
    } catch {
      // Not empty, or gone.
    }
  };
  try {
    const { files, laid } = readsConfiguration ? readLaidConfiguration(stackDir) : { files: [], laid: { files: [], digest: filesDigest([]) } };
    for (const { name, bytes } of files) fs.writeFileSync(path.join(dir, name), bytes, { mode: 0o644 });
    const linked = new Map<string, string>();
    let engineDataDir: LaidEngineDataDirectory | undefined;
    let lock: Buffer | undefined;
    let names: string[];
    try {
      names = fs.readdirSync(stackDir).sort();
    } catch {
      names = [];
    }
    for (const name of names) {
      if (!isEngineData(name)) continue;
      const from = path.join(stackDir, name);
      if (name === PROVIDER_LOCK_FILE) {
        try {
          lock = fs.readFileSync(from);
        } catch {
          continue;
        }
        fs.writeFileSync(path.join(dir, name), lock, { mode: 0o644 });
        continue;
      }
      if (name === ENGINE_DATA_DIR && isDirectory(from)) {
        engineDataDir = layEngineDataDirectory(from, path.join(dir, name));
        continue;
      }
      fs.symlinkSync(from, path.join(dir, name));
      linked.set(name, from);
    }
    if (readsConfiguration) {
      // The seal's check and the engine's records, on the copies: what they verify is what the engine reads.
      const problems = [...bookkeepingProblems(dir, path.basename(stackDir)), ...engineRecordProblems(dir)];
      if (problems.length > 0) throw new UntrustedStackDirectory(stackDir, problems);
    }
    const copied = new Set(files.map((f) => f.name));
    let finished = false;
    return {
      dir,
      args: args.map((a) => rebasedArgument(a, stackDir, dir)),
      laid,
      finish: () => {
        if (finished) return;
        finished = true;
        try {
          if (engineDataDir !== undefined) bringBackEngineData(engineDataDir);
          bringBack(dir, stackDir, copied, linked, lock);
        } finally {
          removeDir();
        }
      },
    };
  } catch (e) {
    removeDir();
    throw e;
  }
}

const isDirectory = (file: string) => {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false;
  }
};

/** `.terraform/` as laid: the records copied (with the bytes laid), every other entry linked. */
interface LaidEngineDataDirectory {
  readonly from: string;
  readonly to: string;
  readonly copied: ReadonlyMap<string, Buffer>;
  readonly linked: ReadonlyMap<string, string>;
}

/**
 * Lays the stack's `.terraform/` as a directory of its own: the engine's records that choose what it
 * reads ({@link COPIED_ENGINE_RECORDS}: the backend configuration, the workspace) copied, so that
 * the check of them ({@link engineRecordProblems}) reads the bytes the engine reads; every other
 * entry (installed providers, modules) linked, written through.
 */
function layEngineDataDirectory(from: string, to: string): LaidEngineDataDirectory {
  fs.mkdirSync(to, { mode: 0o700 });
  const copied = new Map<string, Buffer>();
  const linked = new Map<string, string>();
  for (const name of fs.readdirSync(from).sort()) {
    const source = path.join(from, name);
    if (COPIED_ENGINE_RECORDS.has(name)) {
      let bytes: Buffer;
      try {
        bytes = fs.readFileSync(source);
      } catch {
        continue;
      }
      fs.writeFileSync(path.join(to, name), bytes, { mode: 0o600 });
      copied.set(name, bytes);
      continue;
    }
    fs.symlinkSync(source, path.join(to, name));
    linked.set(name, source);
  }
  return { from, to, copied, linked };
}

/**
 * Brings back what the run changed in a laid `.terraform/` ({@link layEngineDataDirectory}): a
 * record it wrote or changed (an `init`, a `workspace select`) replaces the stack's by a rename,
 * one it removed goes; a new entry (`providers/` of a first `init`) is moved in, and so is one that
 * replaced a linked entry (the stack's goes); a link still laid is the stack's own entry, written
 * through.
 */
function bringBackEngineData(laid: LaidEngineDataDirectory): void {
  try {
    if (!fs.lstatSync(laid.to).isDirectory()) return;
  } catch {
    return;
  }
  bringBackEntries(laid.to, laid.from, laid.linked, laid.copied, () => true, true);
}

/**
 * Brings back into `stackSide` what a run changed in `runSide`, among the entries `takes` names:
 * a linked entry the run removed goes from `stackSide` (a directory stays); with `removedCopiesGo`, so
 * does a copied one; an entry still the link laid, or a copy with the bytes laid, is left; one that
 * replaced a linked entry replaces it; a new directory `stackSide` has meanwhile (another run's)
 * stays; anything else is moved in by a rename. One mechanism for the stack directory and its
 * laid `.terraform/`.
 */
function bringBackEntries(runSide: string, stackSide: string, linked: ReadonlyMap<string, string>, copies: ReadonlyMap<string, Buffer>, takes: (name: string) => boolean, removedCopiesGo: boolean): void {
  const left = new Set(fs.readdirSync(runSide));
  // A linked file the engine removed (its state lock's information, once unlocked) goes from the stack too.
  for (const [name, to] of linked) {
    if (left.has(name)) continue;
    try {
      if (!fs.lstatSync(to).isDirectory()) fs.rmSync(to, { force: true });
    } catch {
      // Gone already.
    }
  }
  if (removedCopiesGo) for (const name of copies.keys()) if (!left.has(name)) fs.rmSync(path.join(stackSide, name), { force: true });
  for (const name of [...left].sort()) {
    if (!takes(name)) continue;
    const file = path.join(runSide, name);
    const stat = fs.lstatSync(file);
    if (stat.isSymbolicLink() && linked.get(name) === fs.readlinkSync(file)) continue;
    const bytes = copies.get(name);
    if (bytes !== undefined && stat.isFile() && fs.readFileSync(file).equals(bytes)) continue;
    const target = path.join(stackSide, name);
    // An entry the run replaced (a linked `providers/` removed and made again) replaces the stack's;
    // a new one the stack has meanwhile (another run's) stays the stack's.
    if (linked.has(name)) fs.rmSync(target, { recursive: true, force: true });
    else if (stat.isDirectory() && fs.existsSync(target)) continue;
    fs.renameSync(file, target);
  }
}

/**
 * What {@link EngineWorkingDirectory.finish} moves back: each entry of the engine's data
 * ({@link isEngineData}) the run created or replaced (a link laid and still there is the stack's own
 * file, written through; one the run removed is removed there), and the lock file when it differs
 * from the one laid. A directory the
 * stack directory already has again (`.terraform/` made by another run meanwhile) stays the stack's.
 */
function bringBack(dir: string, stackDir: string, copied: ReadonlySet<string>, linked: ReadonlyMap<string, string>, lock: Buffer | undefined): void {
  const copies = new Map(lock === undefined ? [] : [[PROVIDER_LOCK_FILE, lock]]);
  bringBackEntries(dir, stackDir, linked, copies, (name) => !copied.has(name) && isEngineData(name), false);
}
