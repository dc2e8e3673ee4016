/** Engine subcommands that take `-no-color` (OpenTofu and Terraform alike). */
const COLOURED_SUBCOMMANDS = new Set(['apply', 'destroy', 'import', 'init', 'output', 'plan', 'refresh', 'show', 'validate']);

/**
 * The engine's arguments with `-no-color` after the subcommand when `NO_COLOR` is set (non-empty,
 * as no-color.org says): the engine itself ignores that variable and would colour its output anyway.
 * Arguments that already hold `-no-color`, and subcommands that do not take it, are left as they are.
 */
export function withNoColorArgument(args: readonly string[], env: NodeJS.ProcessEnv): string[] {
  if ((env.NO_COLOR ?? '') === '' || args.includes('-no-color')) return [...args];
  const at = args.findIndex((a) => !a.startsWith('-'));
  if (at < 0 || !COLOURED_SUBCOMMANDS.has(args[at])) return [...args];
  return [...args.slice(0, at + 1), '-no-color', ...args.slice(at + 1)];
}
