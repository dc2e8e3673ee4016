/** Wrong use of the CLI (unknown option, missing argument): exit code 2 and a pointer to `--help`. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
