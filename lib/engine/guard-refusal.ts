/**
 * A refusal of the engine guards: the engine would destroy, replace or take over an object, or do
 * something the guards cannot check, and nothing was run or applied. The CLI exits with
 * `ExitCode.destructionRefused` (4) on every subclass; the message names what and the fix.
 */
export class GuardRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GuardRefusal';
  }
}
