/**
 * Issues 36 and 45: nothing in a stack directory is trusted that synthesis did not write. Before every
 * engine run, an entry that neither the synthesis, the tool nor the engine writes is refused (an
 * allowlist: whatever its name, `#x.tf.json` included; issue 36 refused names the engine reads), and the
 * tool's own files (moves, adopt) are verified against the seal written with them. On a real store
 * and both engines: test/store/engine-tampering.store.test.ts.
 */
import * as fs from 'fs';
import * as path from 'path';
import { makeCheckDirectory, removeCheckDirectory } from '../../../lib/cli/adopt-check-directory';
import { runCli } from '../../../lib/cli/run-cli';
import { BOOKKEEPING_FILES, bookkeepingProblems, SEAL_FILE, sealBookkeeping } from '../../../lib/engine/bookkeeping-seal';
import { GuardRefusal } from '../../../lib/engine/guard-refusal';
import { refuseUntrustedStackDirectory, stackDirectoryProblems, TRUSTED_ENGINE_FILES, UntrustedStackDirectory } from '../../../lib/engine/stack-directory-guard';
import { IMPORT_FILE } from '../../../lib/reconcile/import-blocks';
import { RETIRED_GRANTS_FILE, RETIRED_OWN_GRANTS_FILE } from '../../../lib/reconcile/retired-stack-grants';
import { MOVES_FILE } from '../../../lib/reconcile/stack-moves';
import { platformConfig, TEST_LOCAL_STATE_REASON } from '../../support/platform-config';
import { withPeople } from '../../support/people-config';
import { synthesizePlatform } from '../../support/synthesized-platform';

const PIPELINE = { configurationProject: { projectId: '4242', localStateReason: TEST_LOCAL_STATE_REASON } };

async function run(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { env, cwd, isTerminal: false, stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('the files a stack directory may hold', () => {
  const head = synthesizePlatform(platformConfig);
  const stackDir = path.join(head.outdir, 'stacks', 'app-roles');
  const put = (name: string, text = '{}') => {
    fs.mkdirSync(path.dirname(path.join(stackDir, name)), { recursive: true });
    fs.writeFileSync(path.join(stackDir, name), text);
  };
  const clean = () => {
    for (const name of fs.readdirSync(stackDir)) if (name !== 'cdk.tf.json') fs.rmSync(path.join(stackDir, name), { recursive: true, force: true });
  };
  afterEach(clean);

  it('the trusted names are the synthesis\'s and the tool\'s own, from the constants its writers use', () => {
    expect([...TRUSTED_ENGINE_FILES].sort()).toEqual(['cdk.tf.json', MOVES_FILE, RETIRED_GRANTS_FILE, RETIRED_OWN_GRANTS_FILE, IMPORT_FILE].sort());
    expect(BOOKKEEPING_FILES.map((f) => f.name)).toEqual([MOVES_FILE, RETIRED_GRANTS_FILE, RETIRED_OWN_GRANTS_FILE, IMPORT_FILE]);
  });

  it('a synthesized stack, with what the engine and the tool leave there, passes', () => {
    put('.terraform.lock.hcl', '');
    put('.terraform.lock.hcl.4242.tmp', '');
    put('.terraform/providers/x', '');
    put('.terraform/environment', 'default');
    put('terraform.tfstate', '{}');
    put('terraform.tfstate.backup', '{}');
    put('terraform.tfstate.1796182050.backup', '{}');
    put('.terraform.tfstate.lock.info', '{}');
    put('plan.tfplan', '');
    put('app-roles.removals', '');
    put(`${MOVES_FILE}.writing-123`, '');
    expect(stackDirectoryProblems(stackDir)).toEqual([]);
  });

  // Issue 45: an allowlist. README.md passed under issue 36 (the engine does not read it); now every
  // entry nobody of the three writes is refused, so a name the engine reads tomorrow is refused today.
  it.each(['README.md', '#team_override.tf.json', 'x#', '#x#', '.env', 'notes/', 'x.tfplan.json', 'cdk.tf.json.orig'])('%s, which neither the synthesis, the tool nor the engine writes, is refused', (name) => {
    if (name.endsWith('/')) fs.mkdirSync(path.join(stackDir, name), { recursive: true });
    else put(name);
    const shown = JSON.stringify(name.replace(/\/$/, ''));
    expect(stackDirectoryProblems(stackDir)).toEqual([
      `${shown}: neither the synthesis, secretstore-iac nor the engine wrote it, and the engine may read it (configuration, variables or tests): what it changes is in no review. Fix: remove it (a stack directory holds only what the synthesis, the tool and the engine write); declare what it does in the configuration (stacks/*.ts) and synthesize again`,
    ]);
  });

  it.each([
    'evil_override.tf.json',
    'override.tf',
    'override.tf.json',
    'main.tf',
    'x.tofu',
    'x_override.tofu.json',
    'terraform.tfvars',
    'terraform.tfvars.json',
    'a.auto.tfvars',
    'a.auto.tfvars.json',
    'destroy.tftest.hcl',
  ])('%s, which the engine reads and nobody wrote, is refused with the fix', (name) => {
    put(name);
    expect(stackDirectoryProblems(stackDir)).toEqual([
      `${JSON.stringify(name)}: neither the synthesis, secretstore-iac nor the engine wrote it, and the engine may read it (configuration, variables or tests): what it changes is in no review. Fix: remove it (a stack directory holds only what the synthesis, the tool and the engine write); declare what it does in the configuration (stacks/*.ts) and synthesize again`,
    ]);
  });

  it('another workspace selected, other workspaces\' states, test folders: refused', () => {
    put('.terraform/environment', 'other\n');
    put('terraform.tfstate.d/other/terraform.tfstate', '{}');
    put('tests/x.tftest.hcl', '');
    const problems = stackDirectoryProblems(stackDir);
    expect(problems.map((p) => p.split(':')[0])).toEqual(['"terraform.tfstate.d"', '"tests"', '.terraform/environment selects another workspace than `default`']);
  });

  it('every problem at once, in one GuardRefusal (exit 4) naming the stack', () => {
    put('a_override.tf.json');
    put('terraform.tfvars', '');
    expect(() => refuseUntrustedStackDirectory(stackDir)).toThrow(UntrustedStackDirectory);
    try {
      refuseUntrustedStackDirectory(stackDir);
    } catch (e) {
      expect(e).toBeInstanceOf(GuardRefusal);
      expect((e as Error).message).toMatch(/^app-roles: nothing run: .* holds 2 entries that neither the synthesis, secretstore-iac nor the engine wrote as it is:\n {2}"a_override\.tf\.json": .*\n {2}"terraform\.tfvars": /);
    }
  });

  it('tf refuses before the engine runs (exit 4), with or without --refuse-replace', async () => {
    put('evil_override.tf.json', JSON.stringify({ resource: { vault_policy: { x: { name: 'x', policy: '' } } } }));
    const engine = path.join(head.outdir, 'fake-engine');
    fs.writeFileSync(engine, '#!/bin/sh\necho "engine ran"\n', { mode: 0o755 });
    for (const own of [[], ['--refuse-replace']]) {
      const r = await run(['tf', 'app-roles', '--outdir', head.outdir, '--engine', engine, ...own, '--', 'plan'], head.outdir, { PATH: process.env.PATH, SECRETSTORE_ADDR: 'http://127.0.0.1:9' });
      expect({ own, code: r.code, ran: r.stdout.includes('engine ran') }).toEqual({ own, code: 4, ran: false });
      expect(r.stderr).toContain('"evil_override.tf.json": neither the synthesis, secretstore-iac nor the engine wrote it');
    }
  });
});

describe('the seal of the tool\'s own files', () => {
  /** HEAD without `people`, against a BASE with it: moves writes ci-access's override file and people's retired directory. */
  async function moved(): Promise<{ outdir: string; ciAccess: string; retired: string }> {
    const base = synthesizePlatform({ ...withPeople(), ...PIPELINE });
    const head = synthesizePlatform({ ...platformConfig, ...PIPELINE });
    const r = await run(['moves', base.outdir, head.outdir], path.dirname(head.outdir));
    expect(r.code).toBe(0);
    return { outdir: head.outdir, ciAccess: path.join(head.outdir, 'stacks', 'ci-access'), retired: path.join(head.outdir, 'stacks', 'people') };
  }

  it('what moves wrote passes, sealed with the digest of the synthesis it was derived from', async () => {
    const { ciAccess, retired } = await moved();
    expect(fs.existsSync(path.join(ciAccess, RETIRED_GRANTS_FILE))).toBe(true);
    expect(fs.existsSync(path.join(retired, MOVES_FILE))).toBe(true);
    expect(stackDirectoryProblems(ciAccess)).toEqual([]);
    expect(stackDirectoryProblems(retired)).toEqual([]);
    const seal = JSON.parse(fs.readFileSync(path.join(ciAccess, SEAL_FILE), 'utf8'));
    expect(Object.keys(seal.files)).toEqual([RETIRED_GRANTS_FILE]);
    expect(seal.files[RETIRED_GRANTS_FILE]).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), synthesis: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // A retired stack has no synthesis of its own.
    expect(JSON.parse(fs.readFileSync(path.join(retired, SEAL_FILE), 'utf8')).files[MOVES_FILE].synthesis).toBe('none');
  });

  it('an override file edited by hand ("root" added to a role\'s token_policies) is refused, naming it and the fix', async () => {
    const { ciAccess } = await moved();
    const file = path.join(ciAccess, RETIRED_GRANTS_FILE);
    const override = JSON.parse(fs.readFileSync(file, 'utf8'));
    const role = Object.values(override.resource.vault_jwt_auth_backend_role)[0] as { token_policies: string[] };
    role.token_policies.push('root');
    fs.writeFileSync(file, `${JSON.stringify(override, null, 2)}\n`);
    expect(stackDirectoryProblems(ciAccess)).toEqual([
      `${RETIRED_GRANTS_FILE}: changed since \`secretstore-iac moves\` wrote it (its SHA-256 differs from ${SEAL_FILE}). Fix: remove it and run \`secretstore-iac moves BASE HEAD\` again (it writes the file and its seal); change the configuration, never this file`,
      // Whatever the seal says (anyone can recompute it), the content is checked against the synthesis.
      expect.stringMatching(new RegExp(`^${RETIRED_GRANTS_FILE.replace(/\./g, '\\.')}: vault_jwt_auth_backend_role\\.pipeline-apply_role_[0-9A-F]+: token_policies is not the declared list plus retired stacks' grants: not what \`secretstore-iac\` derives from the synthesis`)),
    ]);
  });

  it('a moves file without its seal, or one placed in a stack moves did not write it into, is refused', async () => {
    const { ciAccess, retired } = await moved();
    fs.copyFileSync(path.join(retired, MOVES_FILE), path.join(ciAccess, MOVES_FILE));
    expect(bookkeepingProblems(ciAccess)).toEqual([
      expect.stringMatching(new RegExp(`^${MOVES_FILE.replace('.', '\\.')}: not recorded in ${SEAL_FILE} as written by \`secretstore-iac moves\`\\. Fix: remove it`)),
      // A retired stack's engine settings in a stack the synthesis declares: not what moves derives there.
      expect.stringContaining(`${MOVES_FILE}: holds a \`terraform\` block: the tool writes only \`removed\`, \`import\`, \`moved\` there`),
      expect.stringContaining(`${MOVES_FILE}: holds a \`provider\` block`),
    ]);
    fs.rmSync(path.join(retired, SEAL_FILE));
    expect(bookkeepingProblems(retired).map((p) => p.split(':')[0]).sort()).toEqual([MOVES_FILE, RETIRED_OWN_GRANTS_FILE].sort());
    expect(bookkeepingProblems(retired)[0]).toContain(`(${SEAL_FILE} is absent or not what the tool writes)`);
  });

  it('synthesized again from another configuration, the stack\'s moves files are stale: refused until moves runs again', async () => {
    const { ciAccess, outdir } = await moved();
    const cdk = path.join(ciAccess, 'cdk.tf.json');
    const stack = JSON.parse(fs.readFileSync(cdk, 'utf8'));
    stack['//'] = { ...stack['//'], changed: true };
    fs.writeFileSync(cdk, JSON.stringify(stack));
    expect(bookkeepingProblems(ciAccess)).toEqual([
      `${RETIRED_GRANTS_FILE}: derived from another synthesis of this stack than its cdk.tf.json (synthesized again since \`secretstore-iac moves\` ran). Fix: remove it and run \`secretstore-iac moves BASE HEAD\` again (it writes the file and its seal)`,
    ]);
    expect(outdir).toBeTruthy();
  });

  it('adopt\'s import file: sealed unbound (it stays valid across syntheses); its check directory carries a seal recording the new file', () => {
    const head = synthesizePlatform(platformConfig);
    const stackDir = path.join(head.outdir, 'stacks', 'app-roles');
    const text = '{"import": []}\n';
    const dir = makeCheckDirectory(stackDir, text);
    try {
      expect(stackDirectoryProblems(dir)).toEqual([]);
      expect(fs.lstatSync(path.join(dir, 'cdk.tf.json')).isSymbolicLink()).toBe(true);
    } finally {
      removeCheckDirectory(dir);
    }
    fs.writeFileSync(path.join(stackDir, IMPORT_FILE), text);
    expect(bookkeepingProblems(stackDir)).toHaveLength(1);
    sealBookkeeping(stackDir, { [IMPORT_FILE]: text }, false);
    expect(bookkeepingProblems(stackDir)).toEqual([]);
    fs.appendFileSync(path.join(stackDir, 'cdk.tf.json'), ' ');
    expect(bookkeepingProblems(stackDir)).toEqual([]);
    fs.writeFileSync(path.join(stackDir, IMPORT_FILE), '{"import": [{"to": "vault_policy.x", "id": "root"}]}\n');
    expect(bookkeepingProblems(stackDir)[0]).toMatch(new RegExp(`^${IMPORT_FILE.replace(/\./g, '\\.')}: changed since \`secretstore-iac adopt\` wrote it`));
    // Its removal is recorded: no entry left, no seal file.
    fs.rmSync(path.join(stackDir, IMPORT_FILE));
    sealBookkeeping(stackDir, { [IMPORT_FILE]: undefined }, false);
    expect(fs.existsSync(path.join(stackDir, SEAL_FILE))).toBe(false);
  });
});
