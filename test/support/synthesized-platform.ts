import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Construct } from 'constructs';
import { SecretStoreApp, SecretStoreValidationError, StateBackendFactory } from '../../lib';
import { definePlatform, Platform } from '../../lib/platform/platform';
import { PlatformConfig } from '../../lib/platform/platform-config';
import { platformConfig } from './platform-config';

/** A synthesized platform: its output directory and the parsed stack JSON. */
export interface SynthesizedPlatform {
  readonly outdir: string;
  readonly stacks: Record<string, any>;
  readonly raw: Record<string, string>;
}

const created: string[] = [];
// Each test file that synthesizes removes its temporary directories when it ends.
afterAll(() => created.splice(0).forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** Every file below a directory (an output), by path relative to it, with its text. */
export function outputFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) =>
    fs.readdirSync(d, { withFileTypes: true }).forEach((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : (out[path.relative(dir, path.join(d, e.name))] = fs.readFileSync(path.join(d, e.name), 'utf8'))));
  walk(dir);
  return out;
}

/** Fresh temporary output directory, removed when the test file ends. */
export function tempOutdir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-unit-'));
  created.push(dir);
  return path.join(dir, 'cdktf.out');
}

/** Synthesizes with the real SecretStoreApp, optionally extending the platform, and reads the result. */
export function synthesizePlatform(
  config: PlatformConfig = platformConfig,
  extend?: (platform: Platform, app: Construct) => void,
  outdir = tempOutdir(),
): SynthesizedPlatform {
  const app = new SecretStoreApp({ outdir });
  const platform = definePlatform(app, config);
  extend?.(platform, app);
  app.synth();
  return readOutdir(outdir);
}

/**
 * The problems a synthesis of the platform (`config`, then `change`) reports, each as
 * `[construct path] message`; [] when it succeeds. A failed synthesis must leave nothing behind: no
 * output directory, no staging directory beside it.
 */
export function synthesisProblems(
  config: PlatformConfig = platformConfig,
  change: (platform: Platform, app: Construct) => void = () => undefined,
  stateBackend?: StateBackendFactory,
): string[] {
  const outdir = tempOutdir();
  const app = new SecretStoreApp({ outdir });
  app.define((a) => change(definePlatform(a, config, stateBackend), a));
  try {
    app.synth();
    return [];
  } catch (e) {
    if (!(e instanceof SecretStoreValidationError)) throw e;
    expect(fs.existsSync(outdir)).toBe(false);
    expect(fs.readdirSync(path.dirname(outdir))).toEqual([]);
    return e.problems.map((p) => `[${p.constructPath}] ${p.message}`);
  }
}

/** Reads every stack of a synthesized output directory. */
export function readOutdir(outdir: string): SynthesizedPlatform {
  const stacks: Record<string, any> = {};
  const raw: Record<string, string> = {};
  for (const name of fs.readdirSync(path.join(outdir, 'stacks')).sort()) {
    raw[name] = fs.readFileSync(path.join(outdir, 'stacks', name, 'cdk.tf.json'), 'utf8');
    stacks[name] = JSON.parse(raw[name]);
  }
  return { outdir, stacks, raw };
}

/** The resources of one type in a stack, as a list. */
export function resources(stack: any, type: string): any[] {
  return Object.values(stack.resource?.[type] ?? {});
}

/** `path "<p>" { capabilities = [...] }` blocks of a rendered policy, as [path, capabilities] pairs. */
export function policyRules(policyText: string): [string, string[]][] {
  return [...policyText.matchAll(/path "([^"]+)" \{\n  capabilities = \[([^\]]*)\]\n\}/g)].map((m) => [
    m[1],
    m[2].split(',').map((c) => c.trim().replace(/"/g, '')),
  ]);
}
