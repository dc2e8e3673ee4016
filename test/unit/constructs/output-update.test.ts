import * as fs from 'fs';
import * as path from 'path';
import { Construct } from 'constructs';
import { AppRoleApplication, Duration, IArtifactSource, SecretStoreApp, SecretStoreStack, SecretStoreValidationError, SynthesisArtifact } from '../../../lib';
import { definePlatform, Platform } from '../../../lib/platform/platform';
import { platformConfig } from '../../support/platform-config';
import { tempOutdir } from '../../support/synthesized-platform';

// A synthesis writes a file only when its bytes changed: what it leaves alone keeps its inode and mtime.

/** An artifact source of the test: one file at `file`. */
class OneFile extends Construct implements IArtifactSource {
  constructor(scope: Construct, id: string, private readonly file: string) {
    super(scope, id);
  }
  artifacts(): SynthesisArtifact[] {
    return [{ path: this.file, content: 'extra\n' }];
  }
}

/** Synthesizes the platform, changed by `extend`, into `outdir`. */
function synth(outdir: string, extend: (p: Platform, app: SecretStoreApp) => void = () => undefined): SecretStoreApp {
  const app = new SecretStoreApp({ outdir });
  extend(definePlatform(app, platformConfig), app);
  app.synth();
  return app;
}

/** The billing application, with a token TTL of `hours`. */
const billing = (hours: number) => (p: Platform) =>
  new AppRoleApplication(p.appRoles, 'billing-dev', { auth: p.appRoles.appRoleAuth, name: 'billing', environment: 'dev', tokenTtl: Duration.hours(hours), secrets: { config: ['api_key'] } });

const OLD = new Date('2001-02-03T04:05:06Z');

/** Every file below `dir`, relative, as `inode@mtime`; with `age`, every mtime is first set far in the past. */
function fileStamps(dir: string, age = false): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const file = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(file);
      else {
        if (age) fs.utimesSync(path.join(dir, file), OLD, OLD);
        const s = fs.statSync(path.join(dir, file));
        files.set(file, `${s.ino}@${s.mtimeMs}`);
      }
    }
  };
  walk('');
  return files;
}

/** Every file's inode and mtime, each mtime set far in the past first, so that a rewrite shows. */
const stamp = (dir: string) => fileStamps(dir, true);

/** The files whose inode or mtime differ from `before` (or that are new), and those gone. */
function touched(dir: string, before: Map<string, string>): { changed: string[]; gone: string[] } {
  const now = fileStamps(dir);
  return {
    changed: [...now].filter(([f, v]) => before.get(f) !== v).map(([f]) => f).sort(),
    gone: [...before.keys()].filter((f) => !now.has(f)).sort(),
  };
}

describe('A synthesis writes a file only when its bytes changed', () => {
  it('a re-synthesis with no change writes nothing: every file keeps its inode and mtime, nothing is left beside the output', () => {
    const outdir = tempOutdir();
    synth(outdir, billing(1));
    const before = stamp(outdir);
    expect(before.size).toBeGreaterThan(8);
    const again = synth(outdir, billing(1));
    expect(again.lastUpdate).toEqual({ written: [], removed: [] });
    expect(touched(outdir, before)).toEqual({ changed: [], gone: [] });
    expect(fs.readdirSync(path.dirname(outdir))).toEqual(['cdktf.out']);
    // Still every artifact it produces, for the synthesis report.
    expect(again.writtenArtifacts).toContain('agents/billing-dev/agent.hcl');
  });

  it('one changed application rewrites only its own files (its stack\'s, its agent\'s): the other stack, the CI templates and the other agents stay as they were', () => {
    const outdir = tempOutdir();
    synth(outdir, billing(1));
    const before = stamp(outdir);
    const changed = synth(outdir, billing(2));
    // The agent's configuration holds the token TTL too.
    const own = ['agents/billing-dev/agent.hcl', 'stacks/app-roles/cdk.tf.json'];
    expect(changed.lastUpdate).toEqual({ written: own, removed: [] });
    expect(touched(outdir, before)).toEqual({ changed: own, gone: [] });
    expect(JSON.stringify(JSON.parse(fs.readFileSync(path.join(outdir, 'stacks/app-roles/cdk.tf.json'), 'utf8')))).toContain('"token_ttl":7200');
  });

  it('what the synthesis no longer produces disappears (a stack with its directory, an artifact, directories left empty); the engine\'s files of the stacks it keeps stay', () => {
    const outdir = tempOutdir();
    synth(outdir, (p, app) => {
      billing(1)(p);
      new SecretStoreStack(app, 'extra', { settings: p.appRoles.settings });
      new OneFile(app, 'one-file', 'extra/deep/file.txt');
    });
    const engineFiles = ['stacks/ci-access/.terraform.lock.hcl', 'stacks/ci-access/adopt-imports.tf.json', 'stacks/ci-access/moves.tf.json', 'stacks/ci-access/.terraform/providers/x'];
    for (const f of [...engineFiles, 'stacks/extra/.terraform.lock.hcl']) {
      fs.mkdirSync(path.dirname(path.join(outdir, f)), { recursive: true });
      fs.writeFileSync(path.join(outdir, f), 'kept\n');
    }
    const before = stamp(outdir);
    const app = synth(outdir);
    expect(app.lastUpdate.removed).toEqual(['agents/billing-dev/agent.hcl', 'agents/billing-dev/entrypoint.sh', 'agents/billing-dev/env.ctmpl', 'extra/deep/file.txt', 'stacks/extra']);
    for (const gone of ['extra', 'stacks/extra', 'agents/billing-dev']) expect(fs.existsSync(path.join(outdir, gone))).toBe(false);
    for (const f of engineFiles) expect(fs.readFileSync(path.join(outdir, f), 'utf8')).toBe('kept\n');
    const { changed, gone } = touched(outdir, before);
    // The billing application is gone from app-roles and from the pipeline roles' policies in ci-access.
    expect(changed).toEqual(expect.arrayContaining(['stacks/app-roles/cdk.tf.json']));
    expect(changed.every((f) => f.startsWith('stacks/') || f.startsWith('ci/') || f === 'manifest.json')).toBe(true);
    expect(gone.filter((f) => !f.startsWith('agents/billing-dev/') && !f.startsWith('extra/') && !f.startsWith('stacks/extra/'))).toEqual([]);
    expect(JSON.parse(fs.readFileSync(path.join(outdir, 'manifest.json'), 'utf8')).stacks.extra).toBeUndefined();
  });

  it('under the cdktf CLI (`cdktf synth`) a stack it no longer produces is left for the CLI, which removes it after the app ran: the CLI\'s own sequence then ends without ENOENT', () => {
    const outdir = tempOutdir();
    synth(outdir, (p, app) => void new SecretStoreStack(app, 'extra', { settings: p.appRoles.settings }));
    // What @cdktf/cli-core's SynthStack.synth does (cdktf-cli 0.21): list the stack directories, run
    // the app with CDKTF_CONTINUE_SYNTH_ON_ERROR_ANNOTATIONS set, then rmSync (no `force`) each listed
    // directory the new manifest lacks.
    const listed = fs.readdirSync(path.join(outdir, 'stacks'));
    const saved = process.env.CDKTF_CONTINUE_SYNTH_ON_ERROR_ANNOTATIONS;
    process.env.CDKTF_CONTINUE_SYNTH_ON_ERROR_ANNOTATIONS = 'true';
    let app: SecretStoreApp;
    try {
      app = synth(outdir);
    } finally {
      if (saved === undefined) delete process.env.CDKTF_CONTINUE_SYNTH_ON_ERROR_ANNOTATIONS;
      else process.env.CDKTF_CONTINUE_SYNTH_ON_ERROR_ANNOTATIONS = saved;
    }
    expect(app.lastUpdate.removed).toEqual([]);
    const stacks = Object.keys(JSON.parse(fs.readFileSync(path.join(outdir, 'manifest.json'), 'utf8')).stacks);
    const orphaned = listed.filter((d) => !stacks.includes(d));
    expect(orphaned).toEqual(['extra']);
    expect(() => orphaned.forEach((d) => fs.rmSync(path.join(outdir, 'stacks', d), { recursive: true }))).not.toThrow();
    // Outside the CLI the app removes it itself (the test above).
    expect(fs.readdirSync(path.join(outdir, 'stacks')).sort()).toEqual([...stacks].sort());
  });

  it('a synthesis that fails validation leaves every file as it was, and nothing beside it', () => {
    const outdir = tempOutdir();
    synth(outdir, billing(1));
    fs.writeFileSync(path.join(outdir, 'stacks', 'ci-access', 'saved.tfplan'), 'plan');
    const before = stamp(outdir);
    const app = new SecretStoreApp({ outdir });
    billing(1)(definePlatform(app, { ...platformConfig, settings: { ...platformConfig.settings, organisation: '' } }));
    expect(() => app.synth()).toThrow(SecretStoreValidationError);
    expect(touched(outdir, before)).toEqual({ changed: [], gone: [] });
    expect(fs.readdirSync(path.dirname(outdir))).toEqual(['cdktf.out']);
  });

  it('an update interrupted before its manifest came back is no synthesized output, and the next synthesis completes it', () => {
    const outdir = tempOutdir();
    synth(outdir);
    const manifest = fs.readFileSync(path.join(outdir, 'manifest.json'), 'utf8');
    // As an update leaves it when interrupted: the manifest aside, one file already new, one old.
    fs.renameSync(path.join(outdir, 'manifest.json'), path.join(outdir, 'manifest.json.updating'));
    fs.writeFileSync(path.join(outdir, 'stacks', 'ci-access', 'cdk.tf.json'), '{}');
    const app = synth(outdir);
    expect(app.lastUpdate.written).toEqual(['manifest.json', 'stacks/ci-access/cdk.tf.json']);
    expect(app.lastUpdate.removed).toEqual(['manifest.json.updating']);
    expect(fs.readFileSync(path.join(outdir, 'manifest.json'), 'utf8')).toBe(manifest);
    expect(fs.existsSync(path.join(outdir, 'manifest.json.updating'))).toBe(false);
  });

  it('a file whose mode alone changed gets its mode back without a rewrite', () => {
    const outdir = tempOutdir();
    synth(outdir);
    const script = path.join(outdir, 'ci', 'secretstore-login.sh');
    const mode = fs.statSync(script).mode & 0o777;
    fs.chmodSync(script, 0o600);
    const before = stamp(outdir);
    const app = synth(outdir);
    expect(app.lastUpdate.written).toEqual(['ci/secretstore-login.sh']);
    expect(fs.statSync(script).mode & 0o777).toBe(mode);
    expect(touched(outdir, before)).toEqual({ changed: [], gone: [] });
  });
});
