import { parseEngineInvocation } from '../../../lib/engine/engine-invocation';
import { ENGINE_OPTIONS, GUARD_ACCEPTS, STATE_WRITING_COMMANDS } from '../../../lib/engine/engine-options';
import { asksToDestroy, DestroyNotAllowed, guardInvocation, GuardedInvocation, InvocationRefused, refuseUnlockedStateWrite } from '../../../lib/engine/invocation-guard';

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
    for (const args of [['init', '-input=false'], ['init', '-upgrade=false', '-lockfile=readonly'], ['output', '-json'], ['state', 'list'], ['state', 'show', ROLE], ['untaint', ROLE], ['refresh'], ['validate'], ['state', 'rm', '-dry-run', ROLE], ['workspace', 'list'], []]) {
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
      'app-roles: nothing run: `apply` has `-frob` (an option --refuse-replace does not know: it cannot tell what the engine would plan or apply with it). Fix: leave it out; if a person decided to run it, run it without --refuse-replace',
    );
    expect(refusal('apply', '-state-out=other.tfstate')).toContain('has `-state-out=other.tfstate` (another state file than the stack\'s own');
    expect(refusal('-chdir=/elsewhere', 'apply')).toContain('runs with -chdir=/elsewhere: --refuse-replace reviews the stack\'s own directory and state');
  });
});

/** Arguments after the options that make each guarded command one the guard runs (a rename for `state mv`). */
const POSITIONALS: Record<string, string[]> = { 'state mv': ['vault_approle_auth_backend_role.old_role_00000000', ROLE], 'state show': [ROLE], untaint: [ROLE], 'workspace select': ['default'] };
/** Options a command needs to be one the guard runs at all (`state rm` only as a dry run). */
const NEEDED: Record<string, string[]> = { 'state rm': ['-dry-run'] };

/** The value a test gives an option: a flag as given (`-x`) or with a value; a value option `=v`. */
function written(option: string, kind: 'flag' | 'value', value?: string): string {
  return kind === 'flag' ? (value === undefined ? `-${option}` : `-${option}=${value}`) : `-${option}=${value ?? 'v'}`;
}

function outcome(command: string, option: string): 'passed' | 'refused' {
  try {
    guarded(...command.split(' '), ...(NEEDED[command] ?? []), option, ...(POSITIONALS[command] ?? []));
    return 'passed';
  } catch (e) {
    if (!(e instanceof InvocationRefused)) throw e;
    return 'refused';
  }
}

describe('tf --refuse-replace passes an engine option only when its allowlist for the command holds it (lib/engine/engine-options.ts)', () => {
  it('property: for every command and every option it declares (flags as given, =true and =false; values), passed if and only if the allowlist holds it with that value', () => {
    const disagreements: string[] = [];
    let cases = 0;
    for (const [command, accepted] of Object.entries(GUARD_ACCEPTS)) {
      const declared = ENGINE_OPTIONS[command];
      expect({ command, declared: declared !== undefined }).toEqual({ command, declared: true });
      // Every accepted option is one the engine declares for the command (no dead allowlist entry).
      expect({ command, undeclared: Object.keys(accepted).filter((o) => declared[o] === undefined) }).toEqual({ command, undeclared: [] });
      for (const [option, kind] of [...Object.entries(declared), ['no-such-option', 'flag'] as const, ['plugin-dirs', 'value'] as const]) {
        const rule = Object.prototype.hasOwnProperty.call(accepted, option) ? accepted[option] : undefined;
        const values: Array<[string | undefined, string]> = kind === 'flag' ? [[undefined, 'true'], ['true', 'true'], ['false', 'false'], ['0', 'false']] : [['readonly', 'readonly'], ['v', 'v']];
        for (const [value, read] of values) {
          const arg = written(option, kind, value);
          // `state rm` runs only as a dry run: `-dry-run=false` after the needed `-dry-run` makes it a real one.
          const removes = command === 'state rm' && option === 'dry-run' && read === 'false';
          const expected = !removes && (rule === true || (rule !== undefined && rule.includes(read))) ? 'passed' : 'refused';
          cases++;
          const got = outcome(command, arg);
          if (got !== expected) disagreements.push(`${command} ${arg}: ${got}, expected ${expected}`);
        }
      }
    }
    expect(disagreements).toEqual([]);
    expect(cases).toBeGreaterThan(300);
  });

  it('property: every other command the engines have is refused whatever its options (the reviewed ones, plan, apply, destroy, state mv, state rm -dry-run, aside)', () => {
    const reviewed = new Set(Object.keys(GUARD_ACCEPTS));
    const others = Object.keys(ENGINE_OPTIONS).filter((c) => !reviewed.has(c));
    expect(others.sort()).toEqual(['force-unlock', 'import', 'providers lock', 'providers mirror', 'state push', 'state replace-provider', 'taint', 'test', 'workspace delete', 'workspace new']);
    for (const command of others) expect({ command, outcome: outcome(command, '-no-color') }).toEqual({ command, outcome: 'refused' });
  });

  it('refuses providers lock in any form, naming the lock it rewrites and the fix', () => {
    for (const args of [['providers', 'lock'], ['providers', 'lock', '-fs-mirror=/tmp/evil'], ['providers', 'lock', '-net-mirror', 'https://evil', '-platform=linux_amd64']]) {
      expect(refusal(...args)).toBe(
        'app-roles: nothing run: `providers lock` rewrites the stack\'s provider lock file (from -fs-mirror, -net-mirror or the registry): every later init installs, and every plan and apply runs, the provider build the new lock names, not the one the tool installed. ' +
          'Fix: the lock comes from `secretstore-iac tf app-roles -- init`, from the tool\'s provider mirror (docs/toolchain.md); to add checksums, a person runs `providers lock` without --refuse-replace and commits locks/app-roles/.terraform.lock.hcl',
      );
    }
    expect(refusal('providers', 'mirror', '.')).toContain('`providers mirror` writes provider packages into a directory of its own');
  });

  it('init passes only in the forms the tool needs: -plugin-dir, -upgrade, -lockfile other than readonly, -backend-config, -from-module, -reconfigure are refused, each with why', () => {
    expect(refusal('init', '-plugin-dir', '/tmp/evil')).toBe(
      'app-roles: nothing run: `init` has `-plugin-dir /tmp/evil` (installs providers from that directory instead of the tool\'s provider mirror, and keeps it for every later init: the next plan and apply would run whatever it holds). ' +
        'Fix: leave it out: init installs from the tool\'s provider mirror (docs/toolchain.md)',
    );
    expect(refusal('init', '-upgrade')).toContain('`-upgrade` (selects newer provider versions and rewrites the stack\'s lock file). Fix: a person upgrades: `secretstore-iac tf app-roles -- init -upgrade` without --refuse-replace');
    expect(refusal('init', '-lockfile=readwrite')).toContain('`-lockfile=readwrite` (a lock file mode other than `readonly`');
    // All problems at once.
    const all = refusal('init', '-backend-config=conn_str=postgres://elsewhere', '-from-module=../x', '-reconfigure', '-input=false');
    expect(all).toMatch(/`-backend-config=conn_str=postgres:\/\/elsewhere` \(merges settings into the synthesized backend block.*`-from-module=\.\.\/x` \(copies another module.*`-reconfigure` \(re-initializes the backend/);
    expect(guarded('init', '-input=false', '-lockfile=readonly', '-lock-timeout=10m', '-no-color')).toEqual({ kind: 'unchecked' });
  });

  it('refuses the state-safety switches, each with why and the fix: -lock=false (but on plan), -backup, -ignore-remote-version, force-unlock', () => {
    expect(refusal('apply', '-lock=false', '-auto-approve')).toBe(
      'app-roles: nothing run: `apply` has `-lock=false` (no state lock held: another run (a pipeline job, a person) may write the same state at the same time, and what one of them creates ends up in neither state). ' +
        'Fix: leave -lock=false out; to wait for another run, give -lock-timeout=10m (as the pipeline\'s jobs do)',
    );
    for (const args of [['destroy', '-lock=0'], ['refresh', '-lock=false'], ['untaint', '-lock=false', ROLE], ['init', '-lock=false'], ['apply', '-lock=false', 'ci.tfplan']]) expect(refusal(...args)).toContain('no state lock held');
    expect(guarded('plan', '-lock=false')).toEqual({ kind: 'unchecked' });
    expect(refusal('apply', '-backup=-')).toContain('`-backup=-` (the state\'s backup written elsewhere, or with `-backup=-` not at all)');
    expect(refusal('untaint', '-ignore-remote-version', ROLE)).toContain('lets this engine write a remote state whose workspace asks for another engine version');
    expect(refusal('force-unlock', '-force', 'LOCKID')).toBe(
      'app-roles: nothing run: `force-unlock` removes another run\'s state lock: that run (a pipeline job, a person\'s apply) may still be writing the state, and both then write it. ' +
        'Fix: wait for the other run (`-lock-timeout=10m`, as the pipeline\'s jobs do); if a person checked that no run holds the lock, `secretstore-iac tf app-roles -- force-unlock LOCK_ID` without --refuse-replace',
    );
  });

  it('an option is read as its own command declares it: `-lock-timeout 10m` takes the next argument, `-lock false` does not (false is then the plan file, as for the engine)', () => {
    expect(guarded('apply', '-lock-timeout', '10m', 'ci.tfplan')).toEqual({ kind: 'saved-plan', planFile: 'ci.tfplan' });
    expect(guarded('apply', '-lock', 'false')).toEqual({ kind: 'saved-plan', planFile: 'false' });
    expect(refusal('init', '-plugin-dir', '/tmp/evil')).toContain('`-plugin-dir /tmp/evil`');
    expect(refusal('constructor')).toContain('`constructor` is a command --refuse-replace cannot check');
  });
});

describe('without --refuse-replace: -lock=false is refused on every command that writes state', () => {
  const unlocked = (...args: string[]): string | undefined => {
    try {
      refuseUnlockedStateWrite(parseEngineInvocation(args), 'app-roles');
      return undefined;
    } catch (e) {
      expect(e).toBeInstanceOf(InvocationRefused);
      return (e as Error).message;
    }
  };

  it('property: each state-writing command with -lock=false (=0, =f, =False) is refused; with -lock, -lock=true or none it passes; a plan (which writes no state) passes', () => {
    for (const command of STATE_WRITING_COMMANDS) {
      for (const value of ['false', '0', 'f', 'False']) expect({ command, value, refused: unlocked(...command.split(' '), `-lock=${value}`) !== undefined }).toEqual({ command, value, refused: true });
      for (const given of [[], ['-lock'], ['-lock=true']]) expect({ command, given, refused: unlocked(...command.split(' '), ...given) !== undefined }).toEqual({ command, given, refused: false });
    }
    for (const readOnly of [['plan', '-lock=false'], ['state', 'list', '-lock=false'], ['output', '-lock=false']]) expect(unlocked(...readOnly)).toBeUndefined();
    expect(unlocked('apply', '-lock=false', '-auto-approve')).toContain('`apply` has `-lock=false` (no state lock held');
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
