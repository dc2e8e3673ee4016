import * as fs from 'fs';
import * as path from 'path';
import { providerMirror } from './engine-run-environment';
import { GuardRefusal } from './guard-refusal';
import { packageHashV1, packageHashZip } from './provider-package-hash';
import { committedProviderLockFile, PROVIDER_LOCK_FILE } from './provider-lock-files';

/** Where `init` installs provider packages in the directory the engine runs in: `<host>/<namespace>/<type>/<version>/<os>_<arch>/`. */
export const INSTALLED_PROVIDERS_DIR = path.join('.terraform', 'providers');

/** One provider block of a lock file: the build it selected and the hashes it accepts. */
export interface LockedProviderBuild {
  /** `registry.opentofu.org/hashicorp/vault`, lower case. */
  readonly address: string;
  /** `5.9.0`. */
  readonly version: string;
  /** `h1:...` and `zh:...`. */
  readonly hashes: readonly string[];
}

// The lock file's grammar as the engines write it, and nothing else: strings of characters that
// need no escape and hold no template (`${`), so that what is read here is what the engine reads.
const ADDRESS = /^provider "([a-z0-9._-]+\/[a-z0-9._-]+\/[a-z0-9._-]+)" \{$/i;
const ATTRIBUTE = /^\s*(version|constraints)\s*=\s*"([A-Za-z0-9.,<>=~! +-]*)"\s*$/;
const HASHES_OPEN = /^\s*hashes\s*=\s*\[\s*$/;
const HASH = /^\s*"((?:h1|zh):[A-Za-z0-9+/=]+)",?\s*$/;
const COMMENT = /^\s*(#|\/\/)/;

/**
 * The provider blocks of a lock file, read in the form OpenTofu and Terraform write it (comments,
 * `provider "ADDRESS" {`, `version`, `constraints`, a `hashes = [` list one per line, `}`); a line
 * of any other form, a repeated block or attribute is a problem (the engine might read it otherwise).
 */
export function readProviderLock(text: string): { readonly builds: LockedProviderBuild[]; readonly problems: string[] } {
  const builds: LockedProviderBuild[] = [];
  const problems: string[] = [];
  let block: { address: string; version?: string; constraints?: string; hashes?: string[]; inHashes: boolean } | undefined;
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const at = `line ${i + 1} (\`${line.length > 80 ? `${line.slice(0, 80)}...` : line}\`)`;
    if (line.trim() === '' || COMMENT.test(line)) return;
    if (block === undefined) {
      const open = ADDRESS.exec(line);
      if (!open) return void problems.push(`${at}: not a provider block as the engine writes it`);
      const address = open[1].toLowerCase();
      if (builds.some((b) => b.address === address)) problems.push(`${at}: a second block for ${address}`);
      block = { address, inHashes: false };
      return;
    }
    if (block.inHashes) {
      if (/^\s*\]\s*$/.test(line)) block.inHashes = false;
      else if (HASH.test(line)) block.hashes!.push(HASH.exec(line)![1]);
      else problems.push(`${at}: not an h1: or zh: hash as the engine writes one`);
      return;
    }
    if (line === '}') {
      if (block.version === undefined) problems.push(`${at}: ${block.address} has no version`);
      else builds.push({ address: block.address, version: block.version, hashes: block.hashes ?? [] });
      block = undefined;
      return;
    }
    const attribute = ATTRIBUTE.exec(line);
    if (attribute) {
      const name = attribute[1] as 'version' | 'constraints';
      if (block[name] !== undefined) problems.push(`${at}: ${name} given twice`);
      block[name] = attribute[2];
    } else if (HASHES_OPEN.test(line) && block.hashes === undefined) {
      block.hashes = [];
      block.inHashes = true;
    } else {
      problems.push(`${at}: not an attribute the engine writes in a provider block`);
    }
  });
  if (block !== undefined) problems.push(`the block for ${block.address} is not closed`);
  return { builds, problems };
}

/**
 * What the tool holds as the provider builds it installed: the hashes it accepts for each, where they
 * come from, and the fix when a stack has another build.
 */
export interface ProviderRecord {
  /**
   * `mirror`: the tool's provider mirror, which no run changes; `committed lock`: the lock the
   * repository commits, which a person's `init -upgrade` (without --refuse-replace) may change.
   */
  readonly source: 'mirror' | 'committed lock';
  /** What holds the record, for messages (`the toolchain's provider mirror /root/.cache/secretstore-iac/provider-mirror`). */
  readonly holder: string;
  /** The fix, for a stack, when its lock or packages are not the record's. */
  fix(stack: string): string;
  /** The hashes it holds for a build, or undefined when it holds none of that provider and version. */
  hashes(address: string, version: string): ReadonlySet<string> | undefined;
}

const isDirectory = (p: string): boolean => {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/**
 * The record of a filesystem mirror the tool built (scripts/toolchain.sh lays the provider it
 * compiled there, unpacked: `<host>/<namespace>/<type>/<version>/<os>_<arch>/`; a packed mirror's
 * `terraform-provider-<type>_<version>_<os>_<arch>.zip` counts by its `zh:` hash): the hashes of
 * the packages it holds, computed from the mirror's files.
 */
export function mirrorRecord(mirror: string): ProviderRecord {
  return {
    source: 'mirror',
    holder: `the toolchain's provider mirror ${mirror}`,
    fix: (stack) =>
      `remove the stack's .terraform directory and its lock file (${PROVIDER_LOCK_FILE}, and locks/${stack}/${PROVIDER_LOCK_FILE} if the repository commits one: \`git checkout -- locks/${stack}\` when it was edited), ` +
      `then run \`secretstore-iac tf ${stack} -- init\`: it installs from the mirror and writes the lock from it (docs/toolchain.md)`,
    hashes(address, version) {
      const [host, namespace, type] = address.split('/');
      const hashes = new Set<string>();
      const unpacked = path.join(mirror, host, namespace, type, version);
      if (isDirectory(unpacked)) {
        for (const platform of fs.readdirSync(unpacked).sort()) {
          const dir = path.join(unpacked, platform);
          if (isDirectory(dir)) hashes.add(packageHashV1(dir));
        }
      }
      const packed = path.join(mirror, host, namespace, type);
      if (isDirectory(packed)) {
        for (const name of fs.readdirSync(packed).sort()) {
          if (name.startsWith(`terraform-provider-${type}_${version}_`) && name.endsWith('.zip')) hashes.add(packageHashZip(path.join(packed, name)));
        }
      }
      return hashes.size > 0 ? hashes : undefined;
    },
  };
}

/** The record of a committed lock file (locks/<stack>/.terraform.lock.hcl): the hashes it lists. */
export function committedLockRecord(file: string, shown: string): ProviderRecord {
  const { builds } = readProviderLock(fs.readFileSync(file, 'utf8'));
  return {
    source: 'committed lock',
    holder: `the committed lock file ${shown}`,
    fix: (stack) =>
      `remove the stack's .terraform/providers directory and run \`secretstore-iac tf ${stack} -- init\`: it installs the builds ${shown} records; if ${shown} was edited, restore it (\`git checkout -- ${shown}\`)`,
    hashes(address, version) {
      const build = builds.find((b) => b.address === address && b.version === version);
      return build === undefined || build.hashes.length === 0 ? undefined : new Set(build.hashes);
    },
  };
}

/**
 * The record a stack's engine runs are checked against: the provider mirror the engine run's CLI
 * configuration names ({@link providerMirror}: `SECRETSTORE_IAC_PROVIDER_MIRROR`, else the one the
 * toolchain built under `$SECRETSTORE_IAC_CACHE` or `~/.cache/secretstore-iac`), holding a package; else the stack's committed lock file, when the repository has one; else none
 * (the engine's own lock, verified by `init` against the registry's signed checksums, stands).
 */
export function providerRecord(stackDir: string, env: NodeJS.ProcessEnv): ProviderRecord | undefined {
  // The mirror the engine run installs from (one decision: engine-run-environment.ts) is the record.
  const mirror = providerMirror(env);
  if (mirror !== undefined && installedPackages(mirror).length > 0) return mirrorRecord(mirror);
  const committed = committedProviderLockFile(stackDir);
  if (committed !== undefined && fs.existsSync(committed)) return committedLockRecord(committed, path.join('locks', path.basename(stackDir), PROVIDER_LOCK_FILE));
  return undefined;
}

/** An installed (or mirrored) unpacked package: its address, version, platform and directory. */
interface InstalledPackage {
  readonly address: string;
  readonly version: string;
  readonly platform: string;
  readonly dir: string;
}

/** The unpacked packages under a provider directory laid out `<host>/<namespace>/<type>/<version>/<os>_<arch>/`. */
function installedPackages(root: string): InstalledPackage[] {
  const below = (dir: string): string[] => (isDirectory(dir) ? fs.readdirSync(dir).sort().filter((name) => isDirectory(path.join(dir, name))) : []);
  const packages: InstalledPackage[] = [];
  for (const host of below(root)) {
    for (const namespace of below(path.join(root, host))) {
      for (const type of below(path.join(root, host, namespace))) {
        for (const version of below(path.join(root, host, namespace, type))) {
          for (const platform of below(path.join(root, host, namespace, type, version))) {
            packages.push({ address: `${host}/${namespace}/${type}`.toLowerCase(), version, platform, dir: path.join(root, host, namespace, type, version, platform) });
          }
        }
      }
    }
  }
  return packages;
}

/**
 * Thrown when a stack's lock file or installed provider packages are not the builds the tool
 * installed; the CLI exits with `ExitCode.destructionRefused` (4), nothing run.
 */
export class ProvidersRefused extends GuardRefusal {
  constructor(
    /** The stack. */
    readonly stack: string,
    /** Each provider, with the expected and found hashes. */
    readonly problems: readonly string[],
    record: ProviderRecord,
    what: string,
  ) {
    super(
      `${stack}: ${what}: the providers are not the builds the tool installed (${record.holder}); the engine would run them with the store token:\n` +
        `${problems.map((p) => `  ${p}`).join('\n')}\nFix: ${record.fix(stack)}`,
    );
    this.name = 'ProvidersRefused';
  }
}

const listed = (hashes: ReadonlySet<string> | undefined): string => (hashes === undefined ? 'none' : [...hashes].sort().join(', '));

/**
 * Refuses an engine run in `workDir` whose lock file lists a hash the record does not hold for that
 * build (or a build it holds none of), or whose installed packages (`.terraform/providers/...`,
 * through the plugin cache's links) hash to no hash the record holds: the lock `providers lock`,
 * `init -plugin-dir`, a prepared plugin cache or an edited committed lock would make the engine
 * trust, and the binary it would start. Every problem is named: the provider, the hashes expected
 * and found.
 * @param what what did not happen, for the message (`nothing run`)
 * @throws ProvidersRefused (exit 4)
 */
export function refuseUntrustedProviders(workDir: string, stack: string, record: ProviderRecord, what = 'nothing run'): void {
  const problems: string[] = [];
  const lockFile = path.join(workDir, PROVIDER_LOCK_FILE);
  if (fs.existsSync(lockFile)) {
    const lock = readProviderLock(fs.readFileSync(lockFile, 'utf8'));
    problems.push(...lock.problems.map((p) => `${PROVIDER_LOCK_FILE} ${p}`));
    for (const build of lock.builds) {
      const trusted = record.hashes(build.address, build.version);
      const foreign = build.hashes.filter((h) => !trusted?.has(h));
      if (trusted === undefined) problems.push(`${build.address} ${build.version}: ${PROVIDER_LOCK_FILE} selects a build ${record.holder} does not hold (the lock lists ${build.hashes.join(', ') || 'no hash'})`);
      else if (foreign.length > 0) problems.push(`${build.address} ${build.version}: ${PROVIDER_LOCK_FILE} lists ${foreign.join(', ')}; expected only ${listed(trusted)}`);
    }
  }
  for (const pkg of installedPackages(path.join(workDir, INSTALLED_PROVIDERS_DIR))) {
    const shown = path.relative(workDir, pkg.dir);
    let found: string;
    try {
      found = packageHashV1(pkg.dir);
    } catch (e) {
      problems.push(`${pkg.address} ${pkg.version} (${pkg.platform}): ${shown} cannot be hashed (${(e as Error).message})`);
      continue;
    }
    const trusted = record.hashes(pkg.address, pkg.version);
    if (!trusted?.has(found)) {
      const real = fs.realpathSync(pkg.dir);
      problems.push(`${pkg.address} ${pkg.version} (${pkg.platform}): installed ${shown}${real === path.resolve(workDir, shown) ? '' : ` (-> ${real})`} hashes to ${found}; expected ${listed(trusted)}`);
    }
  }
  if (problems.length > 0) throw new ProvidersRefused(stack, problems, record, what);
}
