import * as fs from 'fs';
import * as path from 'path';
import { AccessModel } from '../../../lib/access/access-model';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { whoCan, whoCanCapabilities, whoCanRefusal } from '../../../lib/access/who-can';
import { StoreTarget } from '../../../lib/model/store-target';
import { PolicyParser } from '../../../lib/acl/policy-parser';
import { platformConfig } from '../../support/platform-config';
import { ACCESS_FIXTURES } from '../../support/paths';
import { synthesizePlatform } from '../../support/synthesized-platform';

const BASE = path.join(ACCESS_FIXTURES, 'base');

describe('who-can', () => {
  let model: AccessModel;
  beforeAll(async () => {
    model = await AccessModel.load(readStoreConfiguration(BASE));
  });

  it('names the identities that can, with the governing rule and its policies', () => {
    const answer = whoCan(model, 'read', 'secret/data/registry/svc-orchestrator');
    expect(answer.allowed).toEqual([
      { identity: 'jwt/registry-ci', rule: 'secret/data/registry/svc-orchestrator', policies: ['registry-ci'] },
    ]);
    expect(whoCan(model, 'read', 'secret/data/acme/dev/orchestrator/database').allowed.map((e) => e.identity)).toEqual([
      'approle/orchestrator-dev',
    ]);
  });

  it('nobody may write what the platform only lets be read', () => {
    expect(whoCan(model, 'update', 'secret/data/registry/svc-orchestrator').allowed).toEqual([]);
  });

  it('list requests use the list lookup (trailing slash)', () => {
    expect(whoCan(model, 'list', 'secret/metadata/acme/dev/').allowed).toEqual([
      { identity: 'approle/audit-agent', rule: 'secret/metadata/acme/*', policies: ['ops-audit'] },
    ]);
  });

  it('the default policy counts: every identity that has it may renew itself', () => {
    expect(whoCan(model, 'update', 'auth/token/renew-self').allowed.map((e) => e.identity)).toEqual([
      'approle/authentik-role',
      'approle/gitlab-role',
      'approle/orchestrator-dev',
      'approle/registry',
      'jwt/registry-ci',
    ]);
  });
});

describe("who-can asks only about the target store's capability words (docs/stores.md)", () => {
  const OPENBAO = new StoreTarget('openbao', '2.4.0');
  const VAULT = new StoreTarget('vault', '1.21.1');

  it('OpenBao: the common words and scan; Vault: the common words, subscribe and recover; deny on neither', () => {
    expect(whoCanCapabilities(OPENBAO)).toEqual(['create', 'read', 'update', 'patch', 'delete', 'list', 'scan', 'sudo']);
    expect(whoCanCapabilities(VAULT)).toEqual(['create', 'read', 'update', 'patch', 'delete', 'list', 'sudo', 'subscribe', 'recover']);
    for (const word of whoCanCapabilities(VAULT)) expect(whoCanRefusal(word, VAULT)).toBeUndefined();
    expect(whoCanRefusal('deny', VAULT)).toBe('"deny" is not a capability of HashiCorp Vault: ask about create, read, update, patch, delete, list, sudo, subscribe or recover');
  });

  it("refuses the other store's word, explaining that the store refuses every policy naming it", () => {
    expect(whoCanRefusal('scan', VAULT)).toBe(
      '"scan" is a capability of OpenBao, not of HashiCorp Vault: HashiCorp Vault refuses every policy naming it (invalid capability "scan"), ' +
        'so none of its tokens can hold it; ask about create, read, update, patch, delete, list, sudo, subscribe or recover',
    );
    expect(whoCanRefusal('subscribe', OPENBAO)).toMatch(/^"subscribe" is a capability of HashiCorp Vault, not of OpenBao: .*; ask about create, read, update, patch, delete, list, scan or sudo$/);
  });

  it('whoCan throws that reason for a model of the other store, and answers with the store\'s own words', async () => {
    const vault = synthesizePlatform({ ...platformConfig, settings: { ...platformConfig.settings, store: { kind: 'vault', version: '1.21.1' } } });
    const configuration = readStoreConfiguration(vault.outdir);
    expect(String(configuration.store)).toBe('vault 1.21.1');
    const model = await AccessModel.load(configuration);
    expect(model.store.kind).toBe('vault');
    expect(() => whoCan(model, 'scan', 'secret/metadata/acme/')).toThrow('"scan" is a capability of OpenBao, not of HashiCorp Vault');
    expect(whoCan(model, 'subscribe', 'secret/data/acme/dev/orchestrator/database').allowed).toEqual([]);
    const openbao = await AccessModel.load(readStoreConfiguration(BASE));
    expect(openbao.store).toBe(StoreTarget.DEFAULT);
    expect(() => whoCan(openbao, 'recover', 'secret/data/x')).toThrow('"recover" is a capability of HashiCorp Vault, not of OpenBao');
  });
});

describe('the store a synthesized output targets: //.metadata["secretstore-iac-store"] of each stack', () => {
  it('is written only when settings.store is given, and read back; stacks that disagree are refused', () => {
    const plain = synthesizePlatform();
    expect(Object.values(plain.stacks).filter((st: any) => st['//']?.metadata?.['secretstore-iac-store'] !== undefined)).toEqual([]);
    expect(readStoreConfiguration(plain.outdir).store).toBeUndefined();
    const vault = synthesizePlatform({ ...platformConfig, settings: { ...platformConfig.settings, store: { kind: 'vault' } } });
    expect(Object.values(vault.stacks).map((st: any) => st['//'].metadata['secretstore-iac-store'])).toEqual(Object.values(vault.stacks).map(() => ({ kind: 'vault' })));
    const file = path.join(vault.outdir, 'stacks', 'app-roles', 'cdk.tf.json');
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    doc['//'].metadata['secretstore-iac-store'] = { kind: 'openbao', version: '2.4.0' };
    fs.writeFileSync(file, JSON.stringify(doc));
    expect(() => readStoreConfiguration(vault.outdir)).toThrow(/^stacks .* and app-roles target different stores \(vault, openbao 2\.4\.0\)|^stacks app-roles and .* target different stores \(openbao 2\.4\.0, vault\)/);
    doc['//'].metadata['secretstore-iac-store'] = { kind: 'consul' };
    fs.writeFileSync(file, JSON.stringify(doc));
    expect(() => readStoreConfiguration(vault.outdir)).toThrow('stack app-roles: //.metadata["secretstore-iac-store"] is not what the synthesis writes: synthesize again');
  });
});

describe('policy texts of cdk.tf.json are read as the store receives them', () => {
  it("Terraform's escapes are read once (by the resolver), then HCL 1's: $$${x} in the JSON is the store's literal $${x}, $${y} its literal ${y}", async () => {
    const out = synthesizePlatform();
    const file = path.join(out.outdir, 'stacks', 'app-roles', 'cdk.tf.json');
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    doc.resource.vault_policy.escapes = { name: 'escapes', policy: 'path "secret/data/$$${x}/*" {\n  capabilities = ["deny"]\n}\npath "secret/data/$${y}/*" {\n  capabilities = ["read"]\n}\n' };
    fs.writeFileSync(file, JSON.stringify(doc));
    const configuration = readStoreConfiguration(out.outdir);
    const declared = configuration.policies.get('escapes')!;
    expect(declared.text).toBe('path "secret/data/$${x}/*" {\n  capabilities = ["deny"]\n}\npath "secret/data/${y}/*" {\n  capabilities = ["read"]\n}\n');
    const policy = await new PolicyParser().parse(declared.name, declared.text);
    expect(policy.rules.map((r) => r.path.written)).toEqual(['secret/data/$${x}/*', 'secret/data/${y}/*']);
  });
});
