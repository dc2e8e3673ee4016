import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from '../../support/paths';
import { REQUIRED_COMMANDS, RequiredCommand, missingCommandMessage, skipAllowed } from '../../support/required-command';

describe('a command the tests need is installed, or its tests fail unless skipping is asked for', () => {
  it('the failure names the command, the tests, the Debian package, the install command and the opt-out', () => {
    expect(missingCommandMessage('busybox', 'the login script under BusyBox sh')).toBe(
      'busybox is not installed, so the login script under BusyBox sh cannot run. ' +
        'Install the Debian package busybox: apt-get install busybox (bash .ci/run installs it). ' +
        'To run the suite without these tests on purpose, set SECRETSTORE_IAC_ALLOW_SKIP=busybox.',
    );
  });

  it('SECRETSTORE_IAC_ALLOW_SKIP lists commands, separated by commas or spaces; nothing else allows a skip', () => {
    expect(skipAllowed('busybox', {})).toBe(false);
    expect(skipAllowed('busybox', { SECRETSTORE_IAC_ALLOW_SKIP: 'busybox' })).toBe(true);
    expect(skipAllowed('busybox', { SECRETSTORE_IAC_ALLOW_SKIP: 'curl, busybox' })).toBe(true);
    expect(skipAllowed('busybox', { SECRETSTORE_IAC_ALLOW_SKIP: 'curl dash' })).toBe(false);
    expect(skipAllowed('busybox', { SECRETSTORE_IAC_ALLOW_SKIP: 'busybox-extras' })).toBe(false);
    expect(skipAllowed('busybox', { SECRETSTORE_IAC_ALLOW_SKIP: '1' })).toBe(false);
  });

  it.each(Object.keys(REQUIRED_COMMANDS) as RequiredCommand[])('the README\'s setup command (.ci/run) installs %s when it is missing', (command) => {
    expect(fs.readFileSync(path.join(REPO_ROOT, '.ci', 'run'), 'utf8')).toMatch(/^exec bash scripts\/setup\.sh --test$/m);
    const setup = fs.readFileSync(path.join(REPO_ROOT, 'scripts', 'setup.sh'), 'utf8');
    const checked = setup.match(/^\[ "\$mode" = --test \] && needed\+=\(([^)]+)\)/m)?.[1].split(/\s+/) ?? [];
    expect(checked).toContain(command);
    // .ci/run installs the package named like the command, or the one its case mapping names.
    const pkg = REQUIRED_COMMANDS[command];
    if (pkg === command) expect(setup).not.toMatch(new RegExp(`^\\s*${command}\\) pkgs\\+=`, 'm'));
    else expect(setup).toMatch(new RegExp(`^\\s*${command}\\) pkgs\\+=\\(${pkg}\\) ;;$`, 'm'));
  });
});
