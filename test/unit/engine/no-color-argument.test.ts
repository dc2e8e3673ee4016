import { withNoColorArgument } from '../../../lib/engine/no-color-argument';

describe('NO_COLOR reaches the engine as -no-color (it ignores the variable)', () => {
  it('adds -no-color after the subcommand when NO_COLOR is set', () => {
    expect(withNoColorArgument(['plan', '-out=x.tfplan'], { NO_COLOR: '1' })).toEqual(['plan', '-no-color', '-out=x.tfplan']);
    expect(withNoColorArgument(['-chdir=x', 'apply', 'x.tfplan'], { NO_COLOR: 'yes' })).toEqual(['-chdir=x', 'apply', '-no-color', 'x.tfplan']);
  });

  it('leaves the arguments alone without NO_COLOR, with an empty one, when given already, or for a subcommand without the flag', () => {
    expect(withNoColorArgument(['plan'], {})).toEqual(['plan']);
    expect(withNoColorArgument(['plan'], { NO_COLOR: '' })).toEqual(['plan']);
    expect(withNoColorArgument(['plan', '-no-color'], { NO_COLOR: '1' })).toEqual(['plan', '-no-color']);
    expect(withNoColorArgument(['state', 'list'], { NO_COLOR: '1' })).toEqual(['state', 'list']);
    expect(withNoColorArgument(['version'], { NO_COLOR: '1' })).toEqual(['version']);
  });
});
