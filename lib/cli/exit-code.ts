/**
 * Exit codes of the `secretstore-iac` CLI.
 *
 * | code | meaning |
 * |---|---|
 * | 0 | success; for `access-diff`: no access change; for `check-approle`: the pair is valid; for `changed-stacks`: the list was printed, empty or not |
 * | 1 | a result that needs attention, not a failure: `access-diff` access changed, `check-approle` pair invalid, `drift` drift found, `usage` denied requests or failed logins in the audit log (or requests an invariant forbids), `invariants check` an access invariant broken |
 * | 2 | usage error: unknown command or option, missing argument, unknown source |
 * | 3 | runtime error: unreadable output, unresolvable reference, policy the store would refuse, failed synthesis |
 * | 4 | refused, nothing applied or written: (`tf`, `adopt`, every engine run) the stack directory holds an entry that neither the synthesis, the tool nor the engine wrote as it is; the plan would destroy, replace or take over an object (`adopt`, `tf --refuse-replace`), `tf --refuse-replace` cannot check the command or read an object it creates, or `tf` without it is asked to destroy without `--allow-destroy` |
 * | 5 | `tf`, `drift`, `adopt`: a declared KV mount does not match the live store (version, type, path, absent); nothing planned, applied or written |
 */
export const ExitCode = {
  ok: 0,
  accessChanged: 1,
  credentialsInvalid: 1,
  drift: 1,
  usageFindings: 1,
  invariantBroken: 1,
  usage: 2,
  runtime: 3,
  destructionRefused: 4,
  kvMountMismatch: 5,
} as const;

/** One of the {@link ExitCode} values. */
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];
