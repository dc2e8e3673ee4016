import { shellQuote } from '../private/shell-quote';

/** Where a hand fix runs: the store's CLI and the namespace the stacks apply to. */
export interface StoreCliTarget {
  /** The store's CLI (`bao`, `vault`; `bao (or vault)` when the store did not say). */
  readonly cli: string;
  /** The namespace the stacks apply to (`team-a`); undefined for the root namespace. */
  readonly namespace?: string;
}

/**
 * A command line of the store's CLI that a fix text tells a person to run: `bao auth tune
 * -namespace='team-a' -max-lease-ttl=2h jwt/`. Inside a namespace it always carries `-namespace`
 * (a flag every command of both CLIs takes, before its arguments): run as written without it, the
 * command would act on the root namespace, or wherever the shell's VAULT_NAMESPACE points, and
 * never on the objects the fix is about.
 * @param command the CLI's command words (`auth tune`, `secrets enable`)
 * @param rest the command's own flags and arguments, already quoted for the shell where needed
 */
export function storeCliCommand(target: StoreCliTarget, command: string, ...rest: string[]): string {
  return [target.cli, command, ...(target.namespace ? [`-namespace=${shellQuote(target.namespace)}`] : []), ...rest].join(' ');
}
