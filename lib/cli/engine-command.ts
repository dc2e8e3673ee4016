import * as fs from 'fs';
import * as path from 'path';
import { isRetiredStackDirectory, MOVES_FILE } from '../reconcile/stack-moves';
import { readStackNamespace } from '../sources/synth-output';
import { resolveStoreNamespace } from '../store/store-namespace-setting';
import { resolveStoreAddress } from '../store/store-address';
import { checkStoreBeforeEngine, engineNeedsStore } from '../store/store-health';
import { StoreTransport } from '../store/store-transport';
import { checkEngineTokenNamespace } from '../store/token-namespace';
import { engineToken } from '../engine/kv-mount-guard';
import { Command } from './command';
import { parseCommandArguments } from './command-arguments';
import { chooseEngine, engineVersion } from '../engine/engine-binary';
import { buildEngineRunEnvironment, droppedVariablesLine } from '../engine/engine-run-environment';
import { runEngine } from '../engine/engine-process';
import { laidConfigurationText, readLaidConfiguration } from '../engine/engine-working-directory';
import { refuseUntrustedStackDirectory } from '../engine/stack-directory-guard';
import { removeGuardDirectoryLeftovers, temporaryDirectory } from '../engine/guard-directory';
import { parseEngineInvocation } from '../engine/engine-invocation';
import { stateAddresses } from '../engine/engine-state';
import { runGuardedEngine } from '../engine/guarded-engine-run';
import { asksToDestroy, declaredAddresses, DestroyNotAllowed, guardInvocation, InvocationRefused, refuseUnlockedStateWrite } from '../engine/invocation-guard';
import { withNoColorArgument } from '../engine/no-color-argument';
import { keepProviderLockFile, placeCommittedLock, ProviderChecks } from '../engine/provider-lock-files';
import { providerRecord, refuseUntrustedProviders } from '../engine/installed-providers';
import { checkKvMountsBeforeEngine } from '../engine/plan-guards';
import { PlanReview } from '../engine/replacement-guard';
import { checkReviewedPlan, checkReviewSeal, readReviewedPlans } from '../engine/reviewed-plan-check';
import { checkReleasedGrants, renderReleasedAccess } from '../engine/released-grants-check';
import { ExitCode } from './exit-code';
import { approveRemovals, approveRetiredGrants, reportRemovals, reportRetiredGrants } from './removal-approval';
import { UsageError } from './usage-error';
import { inputFilePath } from './input-file';
import { outputFilePath } from './output-file';

/**
 * `secretstore-iac tf STACK [--outdir DIR] [--engine BIN] -- ENGINE-ARGS...`: runs OpenTofu or
 * Terraform in a synthesized stack's directory with `VAULT_ADDR` taken from the spec's
 * `SECRETSTORE_ADDR` (or `VAULT_ADDR` / `BAO_ADDR`): the vault provider itself only reads `VAULT_ADDR`.
 * Stops before running anything when no address is set.
 */
export const engineCommand: Command = {
  name: 'tf',
  summary: 'run tofu/terraform in a synthesized stack with the store address from SECRETSTORE_ADDR or VAULT_ADDR',
  usage: [
    'Usage: secretstore-iac tf STACK [--outdir DIR] [--engine BIN] [--refuse-replace [--allow-removals [--removals-file FILE]] [--reviewed-plans FILE | --released-grants FILE] | --allow-destroy] -- ENGINE-ARGS...',
    '',
    'Runs the engine (ENGINE-ARGS, e.g. `init`, `plan -detailed-exitcode`, `apply`) in DIR/stacks/STACK',
    '(DIR defaults to cdktf.out) with VAULT_ADDR set from SECRETSTORE_ADDR, VAULT_ADDR or BAO_ADDR,',
    'which must agree. The token comes from VAULT_TOKEN as the provider reads it. Stops, before the',
    'engine runs, when no address is set (spec §7: a login would target an empty host).',
    '',
    'Before plan, apply, destroy, refresh, import and console it checks GET /v1/sys/health: a sealed,',
    'uninitialised or unreachable store stops it (exit 3). A standby or performance standby serves',
    '(it forwards to the active node): one line on standard error names the leader (GET /v1/sys/leader).',
    '',
    '  --outdir DIR    synthesized output directory (default cdktf.out)',
    '  --engine BIN    engine binary (default: $SECRETSTORE_IAC_ENGINE, else $SECRETSTORE_IAC_TOFU,',
    '                  else the OpenTofu npm run toolchain built, else tofu, else terraform on PATH)',
    '  --refuse-replace  nothing reaches the store or leaves the state unless reviewed (exit 4, nothing',
    '                  applied, the message names each object and the fix):',
    '                  `apply PLANFILE` reads the saved plan first; `plan -out=FILE` checks the plan it',
    '                  saved (a refused one is removed); `apply` without a plan file and `destroy` plan',
    '                  first WITH the given arguments (-destroy, -replace=, -target=, -var, ...) and',
    '                  apply that reviewed plan (with -auto-approve; without it the engine plans again',
    '                  and asks). Refused: a plan that destroys or replaces an object, or creates one',
    '                  (auth mount, role, policy) the store already has (it moved from another stack:',
    '                  `secretstore-iac moves`; it predates the configuration or a first apply failed',
    '                  half-way: `secretstore-iac adopt`). Each created object is looked up with the',
    '                  engine\'s token (GET, else a LIST of its parent; mounts: GET sys/auth): when the',
    '                  token may read neither (403), the apply is refused naming the policy rule the',
    '                  token lacks (on `plan -out`, a note: its apply checks again). Also refused:',
    '                  `import` (use `secretstore-iac adopt`), `taint`, `state rm`, `state mv` unless it',
    '                  follows a rename of the declaration, `state push`, `workspace delete`, `test`,',
    '                  `providers lock`/`mirror` and `force-unlock` (-chdir is refused with or without it). Read-only commands,',
    '                  `init`, `refresh` and `untaint` run, each with the options of its allowlist',
    '                  only (lib/engine/engine-options.ts): `init -plugin-dir`/`-upgrade`/`-lockfile=`',
    '                  (but readonly), -state/-state-out/-backup, -ignore-remote-version and any',
    '                  other option are refused. The generated configuration pipeline passes it to',
    '                  every plan and apply.',
    '  --allow-destroy  without --refuse-replace, `destroy`, `apply -destroy` and `plan -destroy',
    '                  -out=FILE` are refused (exit 4, nothing destroyed; the message lists the state)',
    '                  unless this is given: a person decides to destroy. `plan -destroy` alone shows',
    '                  what would go. Other commands run as given.',
    '  --allow-removals  with --refuse-replace: a destroy of an object that no stack of the output',
    '                  declares any more (a removed application, group of people or stack) goes',
    '                  through, listed on standard error; replacements, and destroys of objects',
    '                  still declared (moved or renamed), are refused as before. A person decides',
    '                  it: the pipeline passes it to its plans and to its manual approval job only',
    '                  (docs/pipelines.md §8).',
    '  --removals-file FILE  with --allow-removals and `plan -out=`: write those removals to FILE, one',
    '                  per line (`<store path> (<address>)`); FILE is removed when there are none.',
    '  --reviewed-plans FILE  with --refuse-replace and `apply PLANFILE`: apply only the plan the review',
    '                  read. FILE is the review\'s JSON (`access-diff --plans DIR --format json`); the',
    '                  plan file\'s SHA-256 must be the one it records for STACK, and the running engine',
    '                  the version that made it; otherwise refused (exit 4, nothing applied), naming',
    '                  both digests or versions (docs/access.md §1a).',
    '  --released-grants FILE  with --refuse-replace and `apply PLANFILE`: apply a plan that only ends',
    '                  the retired stacks\' grants the stack\'s roles kept (moves\' override, FILE, as',
    '                  sealed in the stack directory and taken out of it): every change an in-place',
    '                  update of an attribute FILE set, to a beginning of FILE\'s value; otherwise refused',
    '                  (exit 4). The pipeline runs it once the retired stacks\' removal is applied',
    '                  (docs/pipelines.md §8).',
    '',
    `STACK may also be a retired stack that \`secretstore-iac moves\` wrote (only ${MOVES_FILE}): its plan`,
    'forgets the objects that moved out (docs/sharding.md). When all its plan destroys are the',
    'configuration pipeline roles\' own grants in it (recorded by moves from the base\'s synthesis),',
    'they pass --refuse-replace without --allow-removals, listed on standard error (docs/pipelines.md §8).',
    '',
    'The engine runs with an environment built from an allowlist, never the caller\'s: what the vault',
    'provider and the state backend need (VAULT_ADDR, VAULT_TOKEN, VAULT_NAMESPACE, the TLS settings,',
    'PG_CONN_STR, ...), input variables (TF_VAR_*), output settings (TF_LOG*, TF_IN_AUTOMATION), PATH,',
    'TMPDIR and the locale (the list: docs/operators.md, "The engine\'s environment"). HOME,',
    'TF_CLI_CONFIG_FILE, TERRAFORM_CONFIG and the XDG directories point into a directory of the run',
    'holding a CLI configuration the tool writes (providers only from its mirror:',
    'SECRETSTORE_IAC_PROVIDER_MIRROR, else the toolchain\'s; else the registry): no ~/.terraformrc,',
    '~/.tofurc or dev_overrides is read. One line on standard error names what was not passed',
    '(TF_CLI_ARGS*, TF_WORKSPACE, TF_DATA_DIR, ...; names only). Before any engine run (with or without',
    '--refuse-replace; also adopt\'s) it refuses an entry of the stack directory that neither the',
    'synthesis, the tool nor the engine writes (an override file, `#x.tf.json`, variables, tests/),',
    'another workspace selected, and the tool\'s own files (moves, adopt) changed since they were',
    'written or derived from another synthesis (secretstore-iac-seal.json records their SHA-256).',
    '',
    'Before every engine run, and after an `init`, the stack\'s lock file and its installed provider',
    'packages (.terraform/providers) must hold only builds of the tool\'s record: the toolchain\'s',
    'provider mirror, else the committed locks/STACK lock (each package\'s h1: hash); otherwise exit 4,',
    'the engine not started, naming each provider with the hashes expected and found. `-lock=false` on',
    'a command that writes state is refused with or without --refuse-replace.',
    '',
    'It prints the engine it runs, its version and why that one, on standard error.',
    '',
    'The engine shares the terminal: its output appears as it is written and its prompts (apply\'s',
    'approval) read from standard input.',
    '',
    'Before plan, apply and import it also compares each KV mount the stack relies on (recorded by the',
    'synthesis) with the store (GET sys/mounts, with VAULT_TOKEN or ~/.vault-token as the provider reads',
    'it): another KV version or engine type, a path inside another mount, or no mount at all stops',
    'it before the engine runs. The token needs read on sys/mounts.',
    '',
    'Exit codes: the engine\'s own exit code; 2 usage error; 3 no address, no engine or no such stack,',
    'or the mount table cannot be read; 4 refused, nothing applied: an entry',
    'of the stack directory (above); (--refuse-replace) the plan would',
    'destroy or replace an object, or create one the store has or the token may not read, or the',
    'command is one it refuses; (without it) the destroy mode without --allow-destroy; 5 a declared',
    'KV mount does not match the store.',
  ].join('\n'),
  async run(args, context) {
    const split = args.indexOf('--');
    const own = split >= 0 ? args.slice(0, split) : args;
    // NO_COLOR reaches the engine as -no-color: it ignores the variable itself.
    const engineArgs = withNoColorArgument(split >= 0 ? args.slice(split + 1) : [], context.env);
    const { values, positionals } = parseCommandArguments(
      own,
      {
        outdir: { type: 'string' },
        engine: { type: 'string' },
        'refuse-replace': { type: 'boolean' },
        'allow-destroy': { type: 'boolean' },
        'allow-removals': { type: 'boolean' },
        'removals-file': { type: 'string' },
        'reviewed-plans': { type: 'string' },
        'released-grants': { type: 'string' },
      },
      { min: 1, max: 1, names: 'one STACK' },
    );
    if (engineArgs.length === 0) throw new UsageError('give the engine\'s arguments after "--", e.g. -- plan');
    const stack = positionals[0];
    const invocation = parseEngineInvocation(engineArgs);
    // The engine runs in the stack's working directory laid fresh from its synthesis: another
    // directory would be one no synthesis wrote and no guard or review read, guarded or not.
    const chdir = invocation.globals.find((g) => g.name === 'chdir');
    if (chdir !== undefined) {
      throw new InvocationRefused(
        stack,
        chdir.tokens.join(' '),
        `would run the engine in another directory than ${stack}'s own, laid fresh from its synthesis: one no synthesis wrote and no guard or review read, with or without --refuse-replace`,
        "leave it out; for another stack, give that stack's name (`secretstore-iac tf OTHER-STACK -- ...`)",
      );
    }
    const refuseReplace = values['refuse-replace'] === true;
    const allowDestroy = values['allow-destroy'] === true;
    if (refuseReplace && allowDestroy) throw new UsageError('--allow-destroy contradicts --refuse-replace: give one of them');
    if (allowDestroy && !asksToDestroy(invocation)) throw new UsageError('--allow-destroy is only for `destroy`, `apply -destroy` and `plan -destroy -out=FILE`');
    const allowRemovals = values['allow-removals'] === true;
    const removalsFile = typeof values['removals-file'] === 'string' ? outputFilePath('--removals-file', values['removals-file'], context.cwd) : undefined;
    if (allowRemovals && !refuseReplace) throw new UsageError('--allow-removals relaxes --refuse-replace: give both');
    if (removalsFile !== undefined && !allowRemovals) throw new UsageError('--removals-file lists what --allow-removals lets through: give both');
    // Input files are checked up front (a sentence, not an errno, when one is missing or a directory).
    const reviewedPlans =
      typeof values['reviewed-plans'] === 'string'
        ? inputFilePath({ option: '--reviewed-plans', given: values['reviewed-plans'], what: 'the review of `access-diff --plans ... --format json` (reviewed-plans.json)' }, context.cwd)
        : undefined;
    if (reviewedPlans !== undefined && !refuseReplace) throw new UsageError('--reviewed-plans goes with --refuse-replace: give both');
    const releasedGrants =
      typeof values['released-grants'] === 'string'
        ? inputFilePath({ option: '--released-grants', given: values['released-grants'], what: 'the kept-grants override `moves` sealed and the release step took out of the stack directory' }, context.cwd)
        : undefined;
    if (releasedGrants !== undefined && !refuseReplace) throw new UsageError('--released-grants goes with --refuse-replace: give both');
    if (releasedGrants !== undefined && reviewedPlans !== undefined) throw new UsageError('--released-grants and --reviewed-plans: give one (a release is no reviewed plan, it only ends kept grants)');
    const address = resolveStoreAddress(context.env);
    const stackDir = path.resolve(context.cwd, String(values.outdir ?? 'cdktf.out'), 'stacks', stack);
    // A retired stack (a shard the configuration no longer has) holds only the moves file that
    // forgets its objects: `moves` wrote its backend and provider there.
    const retired = isRetiredStackDirectory(stackDir);
    if (!retired && !fs.existsSync(path.join(stackDir, 'cdk.tf.json'))) {
      throw new Error(`no synthesized stack at ${stackDir}: run \`npm run synth\` first, or pass --outdir`);
    }
    // What the engine would read there that no review covers (an override file, variables, another
    // workspace, the tool's own files edited) is refused before anything runs.
    refuseUntrustedStackDirectory(stackDir);
    // The guard directories of runs killed mid-guard (their process no longer runs): removed, and said.
    for (const dir of removeGuardDirectoryLeftovers(true, temporaryDirectory(context.env))) context.stderr(`secretstore-iac tf: removed ${dir}: a run killed during its guard left it (its process no longer runs)`);
    // What --refuse-replace cannot check, or what takes an object out of state, is refused before
    // anything runs.
    const guarded = refuseReplace ? guardInvocation(invocation, stack, declaredAddresses(stackDir)) : undefined;
    // Guarded or not, a state-writing command holds the state lock.
    refuseUnlockedStateWrite(invocation, stack);
    // The providers the engine would start (with the store token) are the builds the tool installed:
    // checked before any engine run, the committed lock in place; and after a run that may install
    // or lock providers, before its lock is committed.
    const providers = providerChecks(stackDir, stack, context.env, invocation.subcommand, refuseReplace);
    providers.before?.();
    const choice = chooseEngine(values.engine as string | undefined, context.env);
    const engine = choice.path;
    // A stopped or sealed store otherwise shows as minutes of silent provider retries.
    // The transport carries the TLS variables (VAULT_CACERT, ...) the provider reads too; built only
    // when the engine will talk to the store, so that `init` works offline whatever they hold.
    if (engineNeedsStore(engineArgs)) {
      const health = await checkStoreBeforeEngine(address, engineArgs, StoreTransport.fromEnvironment(context.env, (l) => context.stderr(l)));
      // A standby serves the engine (it forwards to the active node): one line naming the leader.
      if (health?.notice) context.stderr(`secretstore-iac tf: ${health.notice}`);
    }
    // The stack's namespace (settings.namespace) and VAULT_NAMESPACE / BAO_NAMESPACE must agree: the
    // provider applies to the one, the checks below and `drift` would read the other.
    const namespace = resolveStoreNamespace(context.env, retired ? [] : [readStackNamespace(path.join(stackDir, 'cdk.tf.json'))]);
    // The engine's environment, built from an allowlist, with the tool's own CLI configuration.
    const run = buildEngineRunEnvironment(context.env, { address, namespace, cwd: context.cwd });
    try {
      const dropped = droppedVariablesLine('tf', run.dropped);
      if (dropped !== undefined) context.stderr(dropped);
      return await runStack(run.env, run.providerMirror);
    } finally {
      run.dispose();
    }
    // Everything from here runs with the run's environment (disposed when the command ends).
    async function runStack(built: NodeJS.ProcessEnv, mirror: string | undefined): Promise<number> {
      const env = { ...built };
      // A token of the root namespace acts in the stacks' namespace, the provider's child token would not.
      const token = engineToken(env);
      if (namespace !== undefined && token !== undefined && engineNeedsStore(engineArgs)) {
        const checked = await checkEngineTokenNamespace(address, token, namespace, env, StoreTransport.fromEnvironment(context.env, (l) => context.stderr(l)));
        Object.assign(env, checked.env);
        if (checked.notice) context.stderr(`secretstore-iac tf: ${checked.notice}`);
      }
      // The guards ask the store with what the engine will use: its token and namespace.
      const guard = { env, stderr: (line: string) => context.stderr(line) };
      // A retired stack declares no policy: no KV mount to check.
      if (!retired && !(await checkKvMountsBeforeEngine(stack, stackDir, address, engineArgs, guard))) return ExitCode.kvMountMismatch;
      // Which engine, which version, and why (once the checks passed, just before it runs): a wrong
      // one otherwise shows only as a registry error.
      const version = engineVersion(engine, env);
      // And what its fresh working directory holds of the stack (every start lays it again, read once).
      const laid = laidConfigurationText(readLaidConfiguration(stackDir).laid);
      context.stderr(`secretstore-iac tf: engine ${engine} (${version ?? 'version unknown'}; ${choice.why}; providers from ${mirror !== undefined ? `the mirror ${mirror}` : 'the registry (no provider mirror: SECRETSTORE_IAC_PROVIDER_MIRROR)'}; ${laid})`);
      if (guarded !== undefined) {
        if (removalsFile !== undefined && guarded.kind !== 'planned') throw new UsageError('--removals-file goes with `plan -out=FILE`');
        if (reviewedPlans !== undefined) {
          if (guarded.kind !== 'saved-plan') throw new UsageError('--reviewed-plans goes with `apply PLANFILE`: only a saved plan is the plan a review read');
          // The apply applies the reviewed plan, byte for byte, or nothing.
          const plans = readReviewedPlans(reviewedPlans);
          // A seal anyone can recompute is no verification: keyed with the review secret, or said unverified.
          const trust = checkReviewSeal(stack, reviewedPlans, plans, context.env);
          checkReviewedPlan(stack, path.resolve(stackDir, guarded.planFile), plans, values['reviewed-plans'] as string, version, stackDir);
          context.stderr(`secretstore-iac tf: ${stack}: ${trust}`);
          context.stderr(`secretstore-iac tf: ${stack}: ${guarded.planFile} is the plan the review ${values['reviewed-plans']} read (SHA-256 matches) and was made from this stack's synthesis (its configuration snapshot is the stack directory's)`);
        }
        if (releasedGrants !== undefined) {
          if (guarded.kind !== 'saved-plan') throw new UsageError('--released-grants goes with `apply PLANFILE`');
          const released = checkReleasedGrants(stack, stackDir, path.resolve(stackDir, guarded.planFile), releasedGrants, engine, env);
          context.stderr(`secretstore-iac tf: ${stack}: ${guarded.planFile} only ends the retired stacks' grants its roles kept (${values['released-grants']}): exactly the declared values, ${released.length} access change${released.length === 1 ? '' : 's'}:`);
          // The one apply no review read: what it takes away, as the review would show it.
          for (const line of renderReleasedAccess(stack, released)) context.stderr(`secretstore-iac tf: ${line}`);
        }
        // --allow-removals: the destroys of objects the output declares nowhere pass; the rest is guarded.
        const outdir = path.dirname(path.dirname(stackDir));
        const approve = (reviewed: PlanReview): PlanReview => {
          // A retired stack's own pipeline grants, when they are all its plan destroys: no person needed.
          const retiredGrants = approveRetiredGrants(reviewed, stackDir, outdir);
          reportRetiredGrants(retiredGrants.grants, stack, (l) => context.stderr(l));
          const review = retiredGrants.review;
          if (!allowRemovals) return review;
          const approved = approveRemovals(review, outdir);
          reportRemovals(approved.removals, stack, removalsFile, (l) => context.stderr(l));
          return approved.review;
        };
        const io = { ...guard, stdout: (line: string) => context.stdout(line), inheritStdio: context.inheritStdio };
        // The lock file is committed beside cdktf.json (locks/<stack>/), not in the synthesized output.
        return keepProviderLockFile(stackDir, (l) => context.stderr(l), () => runGuardedEngine(guarded, { engine, stackDir, env, stack, address, args: engineArgs, approve }, io), providers, inCiJob(context.env));
      }
      // Without the guard, the destroy mode still needs a person's explicit word: what would go is listed.
      if (asksToDestroy(invocation) && !allowDestroy) {
        let inState: string[] | undefined;
        try {
          inState = stateAddresses(engine, stackDir, env);
        } catch {
          inState = undefined;
        }
        throw new DestroyNotAllowed(stack, engineArgs.join(' '), inState);
      }
      return keepProviderLockFile(stackDir, (l) => context.stderr(l), () => runEngine(engine, engineArgs, stackDir, env, context), providers, inCiJob(context.env));
    }
  },
};

/** Commands that may install provider packages or write the lock file. */
const INSTALLING = new Set(['init', 'get', 'providers']);

/**
 * The provider checks of one `tf` run ({@link refuseUntrustedProviders}) against the tool's record
 * ({@link providerRecord}): before the engine runs, with the committed lock in place; after a run
 * that may install or lock providers. A person's unguarded `init -upgrade` may change a committed
 * lock that is the record (no tool mirror): that new lock is theirs to commit.
 */
function providerChecks(stackDir: string, stack: string, env: NodeJS.ProcessEnv, subcommand: string | undefined, guarded: boolean): ProviderChecks {
  const record = providerRecord(stackDir, env);
  if (record === undefined) return {};
  const installs = subcommand !== undefined && INSTALLING.has(subcommand);
  return {
    before: () => {
      placeCommittedLock(stackDir);
      refuseUntrustedProviders(stackDir, stack, record);
    },
    after: installs && (guarded || record.source === 'mirror') ? () => refuseUntrustedProviders(stackDir, stack, record, 'the lock it wrote is not kept') : undefined,
  };
}

/** A CI job's run (GitLab sets `CI` and `GITLAB_CI` to `true`): files it writes to the working copy are not committed. */
function inCiJob(env: NodeJS.ProcessEnv): boolean {
  return env.CI === 'true' || env.GITLAB_CI === 'true';
}
