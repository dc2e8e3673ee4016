import * as path from 'path';
import { AccessModel } from '../../../lib/access/access-model';
import { readStoreConfiguration } from '../../../lib/access/store-configuration';
import { whoCan } from '../../../lib/access/who-can';
import { ACCESS_FIXTURES } from '../../support/paths';

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
