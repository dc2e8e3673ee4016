/**
 * Commands some tests run that a bare machine may lack. A missing one never silently shrinks the
 * suite: it fails one test that names the Debian package and the install command, unless
 * SECRETSTORE_IAC_ALLOW_SKIP names it; then one skipped test says what does not run, and
 * scripts/jest-summary.js lists it by name.
 */
import { execFileSync } from 'node:child_process';

/** The commands, each with the Debian package that installs it (`bash .ci/run` installs them all). */
export const REQUIRED_COMMANDS = {
  dash: 'dash',
  busybox: 'busybox',
  curl: 'curl',
  chromium: 'chromium',
  'docker-registry': 'docker-registry',
  skopeo: 'skopeo',
  htpasswd: 'apache2-utils',
} as const;

/** A command of {@link REQUIRED_COMMANDS}. */
export type RequiredCommand = keyof typeof REQUIRED_COMMANDS;

/** Comma- or space-separated commands whose tests may be skipped when missing (`busybox,curl`). */
export const ALLOW_SKIP_VARIABLE = 'SECRETSTORE_IAC_ALLOW_SKIP';

/** Absolute path of a command on this machine's PATH, if any. */
export function commandPath(name: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Whether {@link ALLOW_SKIP_VARIABLE} in `env` names `command`. */
export function skipAllowed(command: RequiredCommand, env: NodeJS.ProcessEnv = process.env): boolean {
  return (env[ALLOW_SKIP_VARIABLE] ?? '').split(/[\s,]+/).includes(command);
}

/** Why the tests that need a missing command fail, and the two ways out. */
export function missingCommandMessage(command: RequiredCommand, needs: string): string {
  const pkg = REQUIRED_COMMANDS[command];
  return (
    `${command} is not installed, so ${needs} cannot run. ` +
    `Install the Debian package ${pkg}: apt-get install ${pkg} (bash .ci/run installs it). ` +
    `To run the suite without these tests on purpose, set ${ALLOW_SKIP_VARIABLE}=${command}.`
  );
}

const reported = new Set<RequiredCommand>();

/**
 * The path of a command some tests need. Call it while the test file is collected (top level of the
 * file or of a module it imports), never inside a test. When the command is missing it registers one
 * failing test with {@link missingCommandMessage}, or one skipped test when {@link skipAllowed}, and
 * returns undefined: the caller leaves out the tests that need it.
 * @param needs the tests that need it, in words (`the login script under BusyBox sh`)
 */
export function requiredCommand(command: RequiredCommand, needs: string): string | undefined {
  const found = commandPath(command);
  if (found || reported.has(command)) return found;
  reported.add(command);
  if (skipAllowed(command)) {
    it.skip(`${command} missing, skipped as ${ALLOW_SKIP_VARIABLE} allows: ${needs}`, () => undefined);
  } else {
    it(`requires ${command}: ${needs}`, () => {
      throw new Error(missingCommandMessage(command, needs));
    });
  }
  return undefined;
}
