/**
 * Issue 45, "seals that mean something": a stack directory's seal is a SHA-256 anyone who rewrites a
 * file can compute again, so the tool's engine-read bookkeeping is checked against what the synthesis
 * derives, whatever the seal says. Each forgery here recomputes the seal as an attacker would
 * (`sealBookkeeping`, the tool's own function).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { bookkeepingProblems, sealBookkeeping } from '../../../lib/engine/bookkeeping-seal';
import { IMPORT_FILE } from '../../../lib/reconcile/import-blocks';
import { RETIRED_GRANTS_FILE } from '../../../lib/reconcile/retired-stack-grants';
import { MOVES_FILE } from '../../../lib/reconcile/stack-moves';

const backend = (stack: string) => ({ local: { path: `../../../terraform.${stack}.tfstate` } });
const settings = (stack: string) => ({
  terraform: { backend: backend(stack), required_providers: { vault: { source: 'hashicorp/vault', version: '>= 5.6.0, < 6.0.0' } } },
  provider: { vault: [{ address: 'https://store.example' }] },
});
const meta = (p: string) => ({ '//': { metadata: { path: p } } });

let root: string;
let outdir: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-bookkeeping-'));
  outdir = path.join(root, 'cdktf.out');
  // ci-access declares the pipeline role; app-roles its grant there and an application's policy.
  const documents: Record<string, object> = {
    'ci-access': {
      ...settings('ci-access'),
      resource: {
        vault_jwt_auth_backend_role: { pipeline_role: { role_name: 'secretstore-iac-pipeline', token_policies: ['secretstore-iac-pipeline-app-roles'], ...meta('ci-access/pipeline-apply/role') } },
        vault_policy: { pipeline_policy: { name: 'secretstore-iac-pipeline', policy: 'path "sys/policies/acl/secretstore-iac-pipeline-app-roles" {\n  capabilities = ["read"]\n}' } },
      },
    },
    'app-roles': {
      ...settings('app-roles'),
      resource: {
        vault_policy: {
          grant: { name: 'secretstore-iac-pipeline-app-roles', policy: 'x', ...meta('app-roles/secretstore-iac-grant-pipeline-apply') },
          'orchestrator-dev_policy': { name: 'orchestrator-dev', policy: 'path "secret/data/acme/dev/orchestrator/*" {\n  capabilities = ["read"]\n}' },
        },
      },
    },
  };
  for (const [name, document] of Object.entries(documents)) {
    fs.mkdirSync(path.join(outdir, 'stacks', name), { recursive: true });
    fs.writeFileSync(path.join(outdir, 'stacks', name, 'cdk.tf.json'), JSON.stringify(document));
  }
  fs.writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify({ stacks: Object.fromEntries(Object.keys(documents).map((n) => [n, { synthesizedStackPath: `stacks/${n}/cdk.tf.json` }])) }));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** Writes a bookkeeping file into a stack directory and recomputes its seal, as someone without a secret can. */
function forge(stack: string, name: string, document: object): string {
  const dir = path.join(outdir, 'stacks', stack);
  fs.mkdirSync(dir, { recursive: true });
  const content = `${JSON.stringify(document, null, 2)}\n`;
  fs.writeFileSync(path.join(dir, name), content);
  sealBookkeeping(dir, { [name]: content }, name !== IMPORT_FILE);
  return dir;
}

describe('a moves file holds only the moved, import and removed blocks the synthesis agrees with, whatever its seal', () => {
  it('the blocks moves derives pass', () => {
    const dir = forge('app-roles', MOVES_FILE, {
      '//': 'Written by secretstore-iac moves',
      removed: [{ from: 'vault_policy.gone', lifecycle: [{ destroy: false }] }],
      import: [{ to: 'vault_policy.orchestrator-dev_policy', id: 'orchestrator-dev' }],
      moved: [{ from: 'vault_policy.old_name', to: 'vault_policy.grant' }],
    });
    expect(bookkeepingProblems(dir)).toEqual([]);
  });

  it('a resource block, with the seal recomputed, is refused', () => {
    const dir = forge('app-roles', MOVES_FILE, {
      resource: { vault_policy: { backdoor: { name: 'registry-ci', policy: 'path "secret/*" {\n  capabilities = ["read"]\n}' } } },
    });
    expect(bookkeepingProblems(dir)).toEqual([
      `${MOVES_FILE}: holds a \`resource\` block: the tool writes only \`removed\`, \`import\`, \`moved\` there: not what \`secretstore-iac\` derives from the synthesis. Fix: remove it and run \`secretstore-iac moves BASE HEAD\` again`,
    ]);
  });

  it('blocks the synthesis disagrees with are refused: an import to an undeclared address, a template id, a forgotten declared object, a moved block out of shape', () => {
    const dir = forge('app-roles', MOVES_FILE, {
      import: [{ to: 'vault_policy.not_declared', id: 'registry-ci' }, { to: 'vault_policy.grant', id: '${file("/etc/passwd")}' }],
      removed: [{ from: 'vault_policy.orchestrator-dev_policy', lifecycle: [{ destroy: false }] }, { from: 'vault_policy.x', lifecycle: [{ destroy: true }] }],
      moved: [{ from: 'vault_policy.grant', to: 'vault_policy.orchestrator-dev_policy' }],
      output: { leak: { value: 'x' } },
    });
    expect(bookkeepingProblems(dir).map((p) => p.split(': not what')[0])).toEqual([
      `${MOVES_FILE}: import[0] imports to vault_policy.not_declared, which the synthesis does not declare`,
      `${MOVES_FILE}: import[1] is not \`import { to = <address>, id = <literal> }\` as the tool writes it`,
      `${MOVES_FILE}: removed[0] forgets vault_policy.orchestrator-dev_policy, which the synthesis declares`,
      `${MOVES_FILE}: removed[1] is not \`removed { from = <address>, lifecycle { destroy = false } }\` as moves writes it`,
      `${MOVES_FILE}: moved[0] moves vault_policy.grant to vault_policy.orchestrator-dev_policy: the synthesis must declare the second and not the first`,
      `${MOVES_FILE}: holds a \`output\` block: the tool writes only \`removed\`, \`import\`, \`moved\` there`,
    ]);
  });

  it('an adopt import file holds only import blocks to declared addresses', () => {
    const dir = forge('app-roles', IMPORT_FILE, { import: [{ to: 'vault_policy.grant', id: 'secretstore-iac-pipeline-app-roles' }] });
    expect(bookkeepingProblems(dir)).toEqual([]);
    forge('app-roles', IMPORT_FILE, { import: [], removed: [{ from: 'vault_policy.grant', lifecycle: [{ destroy: false }] }] });
    expect(bookkeepingProblems(dir)).toEqual([expect.stringContaining(`${IMPORT_FILE}: holds a \`removed\` block: the tool writes only \`import\` there`)]);
  });

  it('a retired stack\'s engine settings must be those of a stack of the output (its backend with its own name): another provider address is refused', () => {
    const dir = forge('app-roles-02', MOVES_FILE, { ...settings('app-roles-02'), removed: [{ from: 'vault_policy.moved_away', lifecycle: [{ destroy: false }] }] });
    expect(bookkeepingProblems(dir)).toEqual([]);
    forge('app-roles-02', MOVES_FILE, { ...settings('app-roles-02'), provider: { vault: [{ address: 'https://attacker.example' }] } });
    expect(bookkeepingProblems(dir)).toEqual([expect.stringContaining(`${MOVES_FILE}: its \`provider\` block is the provider of no stack of the synthesized output`)]);
    forge('app-roles-02', MOVES_FILE, { ...settings('app-roles-02'), terraform: { ...settings('app-roles-02').terraform, backend: backend('ci-access') } });
    expect(bookkeepingProblems(dir)).toEqual([expect.stringContaining(`${MOVES_FILE}: its \`terraform\` block is not a stack of the synthesized output's`)]);
    forge('app-roles-02', MOVES_FILE, { ...settings('app-roles-02'), resource: { vault_policy: { p: { name: 'registry-ci', policy: 'x' } } } });
    expect(bookkeepingProblems(dir)).toEqual([expect.stringContaining(`${MOVES_FILE}: holds a \`resource\` block`)]);
  });
});

describe('a retired stack on PostgreSQL state: the schema name is the stack name with `_` for `-`', () => {
  it('its backend is that of a stack of the output with its own schema; another stack\'s schema is refused', () => {
    const pg = (stack: string) => ({ pg: { schema_name: `secretstore_iac_${stack.replace(/-/g, '_')}` } });
    for (const name of ['ci-access', 'app-roles']) {
      const file = path.join(outdir, 'stacks', name, 'cdk.tf.json');
      const document = JSON.parse(fs.readFileSync(file, 'utf8'));
      document.terraform.backend = pg(name);
      fs.writeFileSync(file, JSON.stringify(document));
    }
    const own = { ...settings('app-roles-02'), terraform: { ...settings('app-roles-02').terraform, backend: pg('app-roles-02') } };
    const dir = forge('app-roles-02', MOVES_FILE, { ...own, removed: [{ from: 'vault_policy.moved_away', lifecycle: [{ destroy: false }] }] });
    expect(bookkeepingProblems(dir)).toEqual([]);
    forge('app-roles-02', MOVES_FILE, { ...own, terraform: { ...own.terraform, backend: pg('ci-access') } });
    expect(bookkeepingProblems(dir)).toEqual([expect.stringContaining(`${MOVES_FILE}: its \`terraform\` block is not a stack of the synthesized output's`)]);
  });
});

describe('moves\' override only keeps retired stacks\' grants, whatever its seal', () => {
  const kept = (tokenPolicies: string[], policy?: string) => ({
    resource: {
      vault_jwt_auth_backend_role: { pipeline_role: { token_policies: tokenPolicies } },
      ...(policy !== undefined ? { vault_policy: { pipeline_policy: { policy } } } : {}),
    },
  });
  const own = 'path "sys/policies/acl/secretstore-iac-pipeline-app-roles" {\n  capabilities = ["read"]\n}';
  const block = (name: string) => `\n# Kept by secretstore-iac moves\npath "sys/policies/acl/${name}" {\n  capabilities = ["delete"]\n}\n`;

  it('the declared values plus the retired stacks\' grants pass', () => {
    const dir = forge('ci-access', RETIRED_GRANTS_FILE, kept(['secretstore-iac-pipeline-app-roles', 'secretstore-iac-pipeline-app-roles-02'], `${own}${block('secretstore-iac-pipeline-app-roles-02')}`));
    expect(bookkeepingProblems(dir)).toEqual([]);
  });

  it('another policy kept, a rule on something else, another attribute or object: refused', () => {
    const dir = forge('ci-access', RETIRED_GRANTS_FILE, kept(['secretstore-iac-pipeline-app-roles', 'orchestrator-dev'], `${own}${block('secretstore-iac-pipeline-app-roles')}`));
    expect(bookkeepingProblems(dir).map((p) => p.split(': not what')[0])).toEqual([
      `${RETIRED_GRANTS_FILE}: vault_jwt_auth_backend_role.pipeline_role: token_policies is not the declared list plus retired stacks' grants`,
      `${RETIRED_GRANTS_FILE}: vault_policy.pipeline_policy: policy: the kept rule on sys/policies/acl/secretstore-iac-pipeline-app-roles is not on a grant of a retired stack`,
    ]);
    forge('ci-access', RETIRED_GRANTS_FILE, { resource: { vault_jwt_auth_backend_role: { pipeline_role: { token_policies: ['secretstore-iac-pipeline-app-roles'], bound_claims: { project_path: '*' } } }, vault_policy: { backdoor: { policy: 'x' } } } });
    expect(bookkeepingProblems(dir).map((p) => p.split(': not what')[0])).toEqual([
      `${RETIRED_GRANTS_FILE}: vault_jwt_auth_backend_role.pipeline_role: moves keeps only \`token_policies\` of an object the stack declares`,
      `${RETIRED_GRANTS_FILE}: vault_policy.backdoor: moves keeps only \`policy\` of an object the stack declares`,
    ]);
  });
});
