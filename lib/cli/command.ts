/** What a command sees of its process; tests pass their own. */
export interface CommandContext {
  /** Environment variables. */
  readonly env: NodeJS.ProcessEnv;
  /** Working directory: relative paths and git refs are resolved against it. */
  readonly cwd: string;
  /** True when standard output is a terminal (styling allowed, unless NO_COLOR is set). */
  readonly isTerminal: boolean;
  /** Writes one line (or several, joined by newlines) to standard output. */
  stdout(line: string): void;
  /** Writes one line to standard error. */
  stderr(line: string): void;
  /**
   * True when child processes (the engine) may share this process's standard streams: a prompt
   * can then be answered and output appears as it is written. The bin sets it; tests leave it
   * unset and get the child's output line by line through {@link stdout} and {@link stderr}.
   */
  readonly inheritStdio?: boolean;
}

/**
 * A command of the `secretstore-iac` CLI. To add one, implement this interface in its own file
 * under lib/cli/ and list it in lib/cli/commands.ts.
 *
 * `--help`/`-h` is handled by the dispatcher (it prints {@link usage}). A command returns its exit
 * code (lib/cli/exit-code.ts); it may throw a `UsageError` (exit 2) or any other error (exit 3),
 * which the dispatcher reports on standard error.
 */
export interface Command {
  /** The word after `secretstore-iac`. */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** Full help text. */
  readonly usage: string;
  /**
   * The help for these arguments, when a command has subcommands (`pipeline synth --help` is the
   * subcommand's); without it, {@link usage}.
   */
  usageFor?(args: readonly string[]): string;
  /** Runs the command with the arguments after its name. */
  run(args: readonly string[], context: CommandContext): Promise<number>;
}
