import { parseEngineInvocation } from '../../../lib/engine/engine-invocation';
import { asksToDestroy, DestroyNotAllowed, guardInvocation, GuardedInvocation, InvocationRefused } from '../../../lib/engine/invocation-guard';

const ROLE = 'vault_approle_auth_backend_role.orchestrator-dev_role_1A2B3C4D';
const DECLARED = new Set(['vault_auth_backend.approle_backend_7D2C0F1A', ROLE, 'vault_policy.orchestrator-dev_policy_5E6F7A8B']);

const guarded = (...args: string[]): GuardedInvocation => guardInvocation(parseEngineInvocation(args), 'app-roles', DECLARED);
const refusal = (...args: string[]): string => {
  try {
    guarded(...args);
  } catch (e) {
    expect(e).toBeInstanceOf(InvocationRefused);
    return (e as Error).message;
  }
  throw new Error(`not refused: ${args.join(' ')}`);
};

describe('tf --refuse-replace: every engine command that can change the store is reviewed with the operator\'s own arguments', () => {
  it('apply without a plan file plans with the plan-shaping arguments (-destroy, -replace, -target, -var), then applies that very plan with -auto-approve', () => {
    expect(guarded('apply', '-destroy', '-auto-approve', '-input=false')).toEqual({
      kind: 'plan-then-apply',
      planArgs: ['plan', '-destroy', '-input=false', '-lock=false'],
      applyArgs: ['apply', '-auto-approve', '-input=false'],
    });
    expect(guarded('apply', `-replace=${ROLE}`, '-target', ROLE, '-var', 'x=y', '-auto-approve', '-lock-timeout=10m', '-no-color')).toEqual({
      kind: 'plan-then-apply',
      planArgs: ['plan', `-replace=${ROLE}`, '-target', ROLE, '-var', 'x=y', '-lock-timeout=10m', '-no-color', '-input=false', '-lock=false'],
      applyArgs: ['apply', '-auto-approve', '-lock-timeout=10m', '-no-color'],
    });
  });

  it('without -auto-approve the reviewed plan is not applied: the command runs as given, and the engine shows its plan and asks', () => {
    expect(guarded('apply', '-destroy')).toEqual({ kind: 'plan-then-apply', planArgs: ['plan', '-destroy', '-input=false', '-lock=false'] });
  });

  it('destroy is apply -destroy; the operator\'s -lock is kept', () => {
    expect(guarded('destroy', '-auto-approve', '-lock=true')).toEqual({
      kind: 'plan-then-apply',
      planArgs: ['plan', '-destroy', '-lock=true', '-input=false'],
      applyArgs: ['apply', '-auto-approve', '-lock=true'],
    });
  });

  it('apply PLANFILE reviews the saved plan (also after an option that takes a value), plan -out reviews what it saved, plan alone runs as given', () => {
    expect(guarded('apply', '-lock-timeout', '10m', 'ci.tfplan')).toEqual({ kind: 'saved-plan', planFile: 'ci.tfplan' });
    expect(guarded('plan', '-destroy', '-out', 'd.tfplan')).toEqual({ kind: 'planned', planFile: 'd.tfplan' });
    expect(guarded('plan', '-destroy')).toEqual({ kind: 'unchecked' });
  });

  it('runs what changes neither the store nor what the state holds as given', () => {
    for (const args of [['init', '-upgrade'], ['output', '-json'], ['state', 'list'], ['state', 'show', ROLE], ['untaint', ROLE], ['refresh'], ['validate'], ['state', 'rm', '-dry-run', ROLE], ['workspace', 'list'], []]) {
      expect(guarded(...args)).toEqual({ kind: 'unchecked' });
    }
  });

  it('state mv passes only when it follows a rename of the declaration (FROM no longer declared, TO declared, same type)', () => {
    expect(guarded('state', 'mv', 'vault_approle_auth_backend_role.old_role_00000000', ROLE)).toEqual({ kind: 'unchecked' });
    expect(refusal('state', 'mv', ROLE, 'vault_approle_auth_backend_role.other')).toBe(
      `app-roles: nothing run: \`state mv\` would leave ${ROLE}, which this stack still declares: the next apply creates it again over the store's object. ` +
        'Fix: move an object only to the address this stack declares for it now (its cdk.tf.json), from an address it no longer declares; to move objects between stacks, run `secretstore-iac moves BASE HEAD` (docs/sharding.md)',
    );
    expect(refusal('state', 'mv', 'vault_approle_auth_backend_role.old', 'vault_approle_auth_backend_role.elsewhere')).toContain(
      'would move the object to vault_approle_auth_backend_role.elsewhere, which this stack does not declare: the next apply destroys it',
    );
    expect(refusal('state', 'mv', 'vault_policy.old', ROLE)).toContain('would move a vault_policy to a vault_approle_auth_backend_role');
    expect(refusal('state', 'mv', ROLE)).toContain('needs exactly a FROM and a TO address');
  });

  it('refuses import and names adopt', () => {
    expect(refusal('import', ROLE, 'auth/approle/role/orchestrator-dev')).toBe(
      'app-roles: nothing run: `import` writes a store object into this stack\'s state without a plan the guards can review: the next apply changes the object to the declaration, whatever it held, ' +
        'and an object another stack manages would be held by two states. Fix: run `secretstore-iac adopt app-roles`: it imports every object the stack declares that the store has, after a plan check ' +
        'that refuses what would be destroyed or replaced; then `secretstore-iac tf app-roles --refuse-replace -- apply` (docs/adoption.md)',
    );
  });

  it('refuses state rm, taint, state push, workspace delete, test and unknown subcommands, naming the fix', () => {
    expect(refusal('state', 'rm', ROLE)).toBe(
      `app-roles: nothing run: \`state rm\` takes ${ROLE} out of this stack's state: the store keeps the object, managed by no stack, and the next apply creates it again over the store's (a takeover --refuse-replace refuses). ` +
        'Fix: to move an object to another stack, run `secretstore-iac moves BASE HEAD` (docs/sharding.md); if a person decided to stop managing it, run it without --refuse-replace',
    );
    expect(refusal('taint', ROLE)).toBe(
      `app-roles: nothing run: \`taint\` makes the next apply replace ${ROLE} (destroyed, then created again: an AppRole role gets a new Role ID and every Secret ID issued for it is refused; a mount loses every role under it). ` +
        'Fix: to recover an object an interrupted apply left tainted, `untaint` it; a replacement needs a person: `secretstore-iac tf app-roles -- apply -replace=ADDRESS` without --refuse-replace shows the plan and asks',
    );
    expect(refusal('state', 'push', 'x.tfstate')).toBe('app-roles: nothing run: `state push` changes the state in a way --refuse-replace cannot check. Fix: if a person decided to run it, run it without --refuse-replace');
    expect(refusal('workspace', 'delete', 'w')).toContain('`workspace delete` deletes a workspace\'s state: its objects stay on the store, managed by no stack');
    expect(refusal('test')).toContain('`test` is a command --refuse-replace cannot check (it may change the store or the state)');
    expect(refusal('frobnicate')).toContain('`frobnicate` is a command --refuse-replace cannot check');
  });

  it('refuses an option it does not know (it cannot tell whether it takes the next argument), another state file, and global options', () => {
    expect(refusal('apply', '-frob', 'x')).toBe(
      'app-roles: nothing run: `apply` has `-frob`, an option --refuse-replace does not know: it cannot tell what the engine would plan or apply with it. Fix: leave it out; if a person decided to run it, run it without --refuse-replace',
    );
    expect(refusal('apply', '-state-out=other.tfstate')).toContain('has `-state-out=other.tfstate`: another state file than the stack\'s own');
    expect(refusal('-chdir=/elsewhere', 'apply')).toContain('runs with -chdir=/elsewhere: --refuse-replace reviews the stack\'s own directory and state');
  });
});

describe('tf without --refuse-replace: the destroy mode needs --allow-destroy', () => {
  it('destroy, apply -destroy and plan -destroy -out=FILE ask to destroy; plan -destroy alone and other commands do not', () => {
    const asks = (...args: string[]) => asksToDestroy(parseEngineInvocation(args));
    expect([asks('destroy'), asks('apply', '-destroy', '-auto-approve'), asks('plan', '-destroy', '-out=d.tfplan')]).toEqual([true, true, true]);
    expect([asks('plan', '-destroy'), asks('apply'), asks('apply', '-destroy=false'), asks('apply', `-replace=${ROLE}`), asks('state', 'rm', ROLE)]).toEqual([false, false, false, false, false]);
  });

  it('the refusal lists what the state holds, and the fix', () => {
    expect(new DestroyNotAllowed('app-roles', 'destroy -auto-approve', [ROLE, 'vault_auth_backend.approle_backend_7D2C0F1A']).message).toBe(
      `app-roles: nothing destroyed: \`destroy -auto-approve\` destroys every object in the stack's state (2: ${ROLE}, vault_auth_backend.approle_backend_7D2C0F1A); ` +
        'for an auth mount that is every role under it, with its Role ID and every Secret ID issued. Fix: to see what would go, run `secretstore-iac tf app-roles -- plan -destroy`; ' +
        'if a person decided it, run again with --allow-destroy (the engine shows the plan and asks, unless -auto-approve)',
    );
    expect(new DestroyNotAllowed('x', 'destroy', undefined).message).toContain('destroys every object in the stack\'s state; for an auth mount');
  });
});
