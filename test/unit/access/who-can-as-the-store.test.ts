/**
 * who-can answers as the store decides (issue 26): LIST/SCAN paths, KV version forms, root-protected
 * paths, constrained rules, policies not fully evaluated, policy names as the store files them.
 * The store's side of each is proven by test/store/acl-differential.store.test.ts and
 * test/store/who-can.store.test.ts on OpenBao and Vault.
 */
import { AccessModel } from '../../../lib/access/access-model';
import { Identity } from '../../../lib/access/identity';
import { KnownKvMount, kvPathForm } from '../../../lib/access/kv-path-form';
import { StoreConfiguration } from '../../../lib/access/store-configuration';
import { whoCan } from '../../../lib/access/who-can';
import { StoreKind, StoreTarget } from '../../../lib/model/store-target';

function role(name: string, tokenPolicies: string[]): Identity {
  return { name: `approle/${name}`, method: 'approle', mount: 'approle', role: name, stack: 'test', tokenPolicies, noDefaultPolicy: true, bindings: {} };
}

function configuration(policies: Record<string, string>, identities: Identity[], options: { live?: boolean; kind?: StoreKind } = {}): StoreConfiguration {
  return {
    identities: [...identities].sort((a, b) => (a.name < b.name ? -1 : 1)),
    policies: new Map(Object.entries(policies).map(([name, text]) => [name, { name, text, stack: 'test' }])),
    stacks: ['test'],
    ...(options.live ? { liveStore: true } : {}),
    store: new StoreTarget(options.kind ?? 'openbao', options.kind === 'vault' ? '1.21.1' : '2.4.0'),
  };
}

const rule = (path: string, caps: string[], extra = '') => `path "${path}" {\n  capabilities = [${caps.map((c) => `"${c}"`).join(', ')}]\n${extra}}\n`;
const V2: KnownKvMount = { path: 'secret', version: 2, source: 'settings.kvMount of stack platform' };
const V1: KnownKvMount = { path: 'kv', version: 1, source: 'settings.kvMount of stack legacy' };

describe('LIST and SCAN paths are answered as the store checks them: with a trailing "/"', () => {
  it('who-can list secret/metadata/team answers as for secret/metadata/team/, with a note', async () => {
    const model = await AccessModel.load(configuration({ team: rule('secret/metadata/team/*', ['list', 'scan']) }, [role('team', ['team'])]));
    for (const capability of ['list', 'scan'] as const) {
      const answer = whoCan(model, capability, 'secret/metadata/team');
      expect(answer.evaluatedPath).toBe('secret/metadata/team/');
      expect(answer.allowed.map((e) => e.identity)).toEqual(['approle/team']);
      expect(answer.notes).toEqual([`the store adds a trailing "/" to every ${capability.toUpperCase()} request: answered for secret/metadata/team/`]);
    }
    // A read is not a listing: no "/" added, no note.
    expect(whoCan(model, 'read', 'secret/metadata/team')).toMatchObject({ evaluatedPath: 'secret/metadata/team', notes: [], allowed: [] });
  });
});

describe('a KV path in the other version\'s form is answered for the form its mount serves, with a note', () => {
  it('on a version 2 mount, secret/<p> is answered for secret/data/<p> (secret/metadata/<p> for LIST)', async () => {
    const model = await AccessModel.load(
      configuration({ helm: rule('secret/data/registry/svc-helm', ['read']) + rule('secret/metadata/registry/*', ['list']) }, [role('ci', ['helm'])]),
    );
    const read = whoCan(model, 'read', 'secret/registry/svc-helm', { kvMounts: [V2] });
    expect(read.evaluatedPath).toBe('secret/data/registry/svc-helm');
    expect(read.allowed.map((e) => e.identity)).toEqual(['approle/ci']);
    expect(read.notes).toEqual([
      'secret/ is KV version 2 (settings.kvMount of stack platform): it serves no secret at secret/registry/svc-helm (the store answers 404 ' +
        '"Invalid path for a versioned K/V secrets engine" to a token allowed there), so this answers for secret/data/registry/svc-helm, ' +
        "the path the store's CLI and agent request for it",
    ]);
    const list = whoCan(model, 'list', 'secret/registry', { kvMounts: [V2] });
    expect(list.evaluatedPath).toBe('secret/metadata/registry/');
    expect(list.allowed.map((e) => e.identity)).toEqual(['approle/ci']);
    expect(list.notes).toHaveLength(2);
    // Without the mount's version known, the path is answered as written: nobody.
    expect(whoCan(model, 'read', 'secret/registry/svc-helm').allowed).toEqual([]);
  });

  it('on a version 1 mount, kv/data/<p> is answered for kv/<p>; paths already in the served form are left alone', async () => {
    const model = await AccessModel.load(configuration({ legacy: rule('kv/registry/*', ['read']) }, [role('legacy', ['legacy'])]));
    const answer = whoCan(model, 'read', 'kv/data/registry/svc-helm', { kvMounts: [V1, V2] });
    expect(answer.evaluatedPath).toBe('kv/registry/svc-helm');
    expect(answer.allowed.map((e) => e.identity)).toEqual(['approle/legacy']);
    expect(answer.notes[0]).toBe(
      "kv/ is KV version 1 (settings.kvMount of stack legacy): data/ is KV version 2's API form, which a version 1 mount does not have, " +
        'so this answers for kv/registry/svc-helm, the path the mount serves the secret at',
    );
    expect(kvPathForm('read', 'kv/registry/svc-helm', [V1])).toBeUndefined();
    expect(kvPathForm('read', 'secret/data/registry/svc-helm', [V2])).toBeUndefined();
    expect(kvPathForm('read', 'secret/config', [V2])).toBeUndefined();
    expect(kvPathForm('read', 'other/registry/svc-helm', [V2])).toBeUndefined();
  });
});

describe('root-protected paths need sudo', () => {
  it('an identity with update but no sudo on sys/auth/<m> is not reported as able; it is listed as refused for want of sudo', async () => {
    const model = await AccessModel.load(
      configuration({ ops: rule('sys/auth/*', ['create', 'read', 'update', 'delete']), root: rule('sys/auth/*', ['update', 'sudo']) }, [
        role('ops', ['ops']),
        role('admin', ['root']),
      ]),
    );
    const answer = whoCan(model, 'update', 'sys/auth/oidc');
    expect(answer.allowed.map((e) => e.identity)).toEqual([]);
    expect(answer.needSudo.map((e) => e.identity)).toEqual(['approle/ops']);
    expect(answer.notes).toEqual(['sys/auth/oidc is root-protected (sys/auth/*): a request there needs "sudo" on the governing rule besides "update"']);
    // A policy literally named "root" refuses the login, so admin is not listed at all; sudo itself needs no note.
    expect(whoCan(model, 'sudo', 'sys/auth/oidc')).toMatchObject({ allowed: [], notes: [] });
    // sys/mounts needs no sudo.
    expect(whoCan(model, 'read', 'sys/auth').notes).toEqual([]);
  });
});

describe('constrained rules are marked', () => {
  it('wrapping TTLs and parameters are named on the entry; an unconstrained entry has no constraints field', async () => {
    const model = await AccessModel.load(
      configuration(
        {
          wrapped: rule('secret/data/a', ['read'], '  min_wrapping_ttl = "1m"\n  max_wrapping_ttl = "1h"\n'),
          params: rule('secret/data/b', ['update'], '  allowed_parameters = {\n    "data" = []\n  }\n  required_parameters = ["data"]\n'),
          plain: rule('secret/data/a', ['read']) + rule('secret/data/b', ['update']),
        },
        [role('wrapped', ['wrapped']), role('params', ['params']), role('plain', ['plain'])],
      ),
    );
    expect(whoCan(model, 'read', 'secret/data/a').allowed).toEqual([
      { identity: 'approle/plain', rule: 'secret/data/a', policies: ['plain'] },
      { identity: 'approle/wrapped', rule: 'secret/data/a', policies: ['wrapped'], constraints: ['max_wrapping_ttl', 'min_wrapping_ttl'] },
    ]);
    expect(whoCan(model, 'update', 'secret/data/b').allowed[0]).toEqual({
      identity: 'approle/params',
      rule: 'secret/data/b',
      policies: ['params'],
      constraints: ['allowed_parameters', 'required_parameters'],
    });
  });
});

describe('a policy the store accepts but the evaluator does not model marks only the identities holding it', () => {
  it('live: an unmodelled key and an unreadable text neither stop the analysis nor hide the modelled rules', async () => {
    const model = await AccessModel.load(
      configuration(
        {
          events: rule('secret/data/a', ['read', 'subscribe'], '  subscribe_event_types = ["kv*"]\n'),
          // A text the parser cannot read (as from a newer store version): here, a block never closed.
          broken: 'path "secret/data/a" {\n  capabilities = ["read"]\n',
          plain: rule('secret/data/a', ['read']),
        },
        [role('events', ['events']), role('broken', ['broken']), role('plain', ['plain'])],
        { live: true, kind: 'vault' },
      ),
    );
    const answer = whoCan(model, 'read', 'secret/data/a');
    expect(answer.allowed.map((e) => e.identity)).toEqual(['approle/events', 'approle/plain']);
    expect(answer.notFullyEvaluated.map((u) => [u.identity, u.policies.map((p) => p.name)])).toEqual([
      ['approle/broken', ['broken']],
      ['approle/events', ['events']],
    ]);
    expect(answer.notFullyEvaluated[1].policies[0].reasons).toEqual(['path "secret/data/a": key "subscribe_event_types" is not evaluated']);
    expect(answer.notes).toEqual(['2 identities hold a policy that is not fully evaluated: the answer counts its other rules, and they may have more access than shown (listed below)']);
    expect(model.get('approle/events')!.problems).toEqual([
      'may have more access: policy "events" is not fully evaluated (path "secret/data/a": key "subscribe_event_types" is not evaluated); its other rules count',
    ]);
  });

  it('declared: the same unreadable text is a policy the store would refuse, and stops the analysis', async () => {
    const config = configuration({ broken: 'path "a" {\n  capabilities = ["read"]\n' }, [role('broken', ['broken'])]);
    await expect(AccessModel.load(config)).rejects.toThrow('policy "broken": not valid HCL');
  });
});

describe('policy names are compared as the store files them', () => {
  it('token_policies " Team\\t" finds the policy "team"; the login\'s policies are the stored names', async () => {
    const model = await AccessModel.load(configuration({ team: rule('secret/data/team', ['read']) }, [role('t', [' Team\t', 'İNFRA'])]));
    expect(model.get('approle/t')!.tokenPolicies).toEqual(['infra', 'team']);
    expect(whoCan(model, 'read', 'secret/data/team').allowed.map((e) => e.identity)).toEqual(['approle/t']);
  });
});
