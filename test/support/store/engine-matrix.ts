/**
 * The engines the engine-facing store tests run on: the toolchain's OpenTofu always, and Terraform
 * where it is installed (`SECRETSTORE_IAC_TERRAFORM`, else `terraform` on PATH, else
 * `/usr/local/bin/terraform`; `SECRETSTORE_IAC_TERRAFORM=absent` runs as a machine without it). scripts/toolchain.sh does not build it (docs/toolchain.md, "Terraform").
 *
 * {@link forEachEngine} is the one place that adds the engine dimension to a test: one `describe`
 * per engine, each test's title ending in `[OpenTofu 1.12.6]` / `[Terraform 1.11.4]`. Where
 * Terraform is absent, the Terraform copy is registered skipped with {@link TERRAFORM_ABSENT} in its
 * titles, so jest lists each by name and scripts/jest-summary.js counts them in its line
 * "Terraform absent: N engine-facing tests ran on OpenTofu only": never a silent skip.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { toolchain } from './toolchain-env';

/** One engine a test runs on. */
export interface TestEngine {
  /** `OpenTofu` or `Terraform`. */
  readonly name: 'OpenTofu' | 'Terraform';
  /** The version the binary reports (`1.12.6`), or `absent`. */
  readonly version: string;
  /** The binary (empty when absent). */
  readonly binary: string;
  /** `OpenTofu 1.12.6`, `Terraform 1.11.4`: what test titles name. */
  readonly label: string;
  /** `t` with the engine and its version appended: `t [Terraform 1.11.4]`. */
  title(t: string): string;
}

/**
 * The marker in the titles of the Terraform tests that did not run because Terraform is absent.
 * scripts/jest-summary.js looks for the same text (it cannot import this module).
 */
export const TERRAFORM_ABSENT = 'Terraform absent';

/** Where Terraform is looked for, in order, after `SECRETSTORE_IAC_TERRAFORM`. */
const TERRAFORM_FALLBACK = '/usr/local/bin/terraform';

/** `Terraform v1.11.4` / `OpenTofu v1.12.6` → `1.11.4`, or undefined when the binary does not run. */
function reportedVersion(binary: string, name: string): string | undefined {
  const r = spawnSync(binary, ['version'], {
    encoding: 'utf8',
    timeout: 30_000,
    // The toolchain's CLI configuration: an engine warns about a missing one (TF_CLI_CONFIG_FILE).
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TF_CLI_CONFIG_FILE: toolchain().cliConfig, CHECKPOINT_DISABLE: '1' },
  });
  return r.status === 0 ? new RegExp(`^${name} v(\\S+)`).exec(r.stdout)?.[1] : undefined;
}

/** The engine `name` at `binary`, reporting `version` (`absent`: the placeholder of a Terraform this machine lacks). */
export function testEngine(name: TestEngine['name'], binary: string, version: string): TestEngine {
  const label = version === 'absent' ? `${TERRAFORM_ABSENT}: not at SECRETSTORE_IAC_TERRAFORM, on PATH or at ${TERRAFORM_FALLBACK}; ran on OpenTofu only` : `${name} ${version}`;
  return { name, binary, version, label, title: (t) => `${t} [${label}]` };
}

/** The Terraform binary this machine has, if any. */
function terraformBinary(): string | undefined {
  const named = process.env.SECRETSTORE_IAC_TERRAFORM;
  // `absent`: run as a machine without Terraform does (to see the summary's line).
  if (named === 'absent') return undefined;
  if (named) return named; // named on purpose: a wrong path fails the tests, it is not "absent"
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    if (fs.existsSync(path.join(dir, 'terraform'))) return path.join(dir, 'terraform');
  }
  return fs.existsSync(TERRAFORM_FALLBACK) ? TERRAFORM_FALLBACK : undefined;
}

let cached: { present: TestEngine[]; absent: TestEngine[] } | undefined;

/** The engines of this machine (`present`: OpenTofu first), and the Terraform placeholder when absent. */
export function testEngines(): { present: TestEngine[]; absent: TestEngine[] } {
  if (cached) return cached;
  const tofu = toolchain().tofu;
  const tofuVersion = reportedVersion(tofu, 'OpenTofu');
  if (!tofuVersion) throw new Error(`${tofu} version did not print "OpenTofu v...": rebuild the toolchain (bash scripts/toolchain.sh)`);
  const present = [testEngine('OpenTofu', tofu, tofuVersion)];
  const absent: TestEngine[] = [];
  const terraform = terraformBinary();
  if (terraform) {
    const version = reportedVersion(terraform, 'Terraform');
    if (!version) throw new Error(`${terraform} version did not print "Terraform v...": fix or remove it, or set SECRETSTORE_IAC_TERRAFORM`);
    present.push(testEngine('Terraform', terraform, version));
  } else {
    absent.push(testEngine('Terraform', '', 'absent'));
  }
  cached = { present, absent };
  return cached;
}

/** The toolchain's OpenTofu (always present). */
export function openTofu(): TestEngine {
  return testEngines().present[0];
}

/**
 * Registers `body`'s tests once per engine, in a `describe` titled `title [engine version]`; the
 * body names the engine in each test's title with `engine.title(...)`. Call it at a test file's top
 * level. Where Terraform is absent its copy is registered skipped (titles marked
 * {@link TERRAFORM_ABSENT}), so the run's summary counts what ran on OpenTofu only.
 */
export function forEachEngine(title: string, body: (engine: TestEngine) => void): void {
  const { present, absent } = testEngines();
  for (const e of present) describe(e.title(title), () => body(e));
  for (const e of absent) describe.skip(e.title(title), () => body(e));
}
