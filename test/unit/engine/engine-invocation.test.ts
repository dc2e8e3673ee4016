import { flagSet, optionValue, parseEngineInvocation } from '../../../lib/engine/engine-invocation';

describe('an engine command line, read as OpenTofu and Terraform read it', () => {
  it('splits global options, the subcommand, its options and its arguments', () => {
    expect(parseEngineInvocation(['-chdir=x', 'apply', '-auto-approve', '-target', 'vault_policy.p', '-var=a=b', 'plan.tfplan'])).toEqual({
      globals: [{ name: 'chdir', value: 'x', tokens: ['-chdir=x'] }],
      subcommand: 'apply',
      options: [
        { name: 'auto-approve', tokens: ['-auto-approve'] },
        { name: 'target', value: 'vault_policy.p', tokens: ['-target', 'vault_policy.p'] },
        { name: 'var', value: 'a=b', tokens: ['-var=a=b'] },
      ],
      positionals: ['plan.tfplan'],
    });
  });

  it('an option that takes a value takes the next argument (`-var x=y` is no plan file); a flag does not', () => {
    expect(parseEngineInvocation(['apply', '-var', 'x=y']).positionals).toEqual([]);
    expect(parseEngineInvocation(['apply', '-replace', 'vault_auth_backend.a']).positionals).toEqual([]);
    // Go's flag package: a flag never takes the next argument (`-lock false` is a plan file "false").
    expect(parseEngineInvocation(['apply', '-destroy', 'x.tfplan']).positionals).toEqual(['x.tfplan']);
    expect(parseEngineInvocation(['apply', '-lock', 'false']).positionals).toEqual(['false']);
    // Two dashes are one.
    expect(parseEngineInvocation(['apply', '--destroy']).options).toEqual([{ name: 'destroy', tokens: ['--destroy'] }]);
  });

  it('options end at the first other argument or at "--"', () => {
    expect(parseEngineInvocation(['apply', 'p.tfplan', '-destroy']).positionals).toEqual(['p.tfplan', '-destroy']);
    expect(parseEngineInvocation(['apply', '--', '-odd.tfplan']).positionals).toEqual(['-odd.tfplan']);
  });

  it('reads the second word of state and workspace commands', () => {
    expect(parseEngineInvocation(['state', 'rm', '-dry-run', 'vault_policy.p'])).toMatchObject({ subcommand: 'state', action: 'rm', positionals: ['vault_policy.p'] });
    expect(parseEngineInvocation(['workspace', 'delete', 'old'])).toMatchObject({ subcommand: 'workspace', action: 'delete', positionals: ['old'] });
    expect(parseEngineInvocation(['taint', 'vault_policy.p'])).toMatchObject({ subcommand: 'taint', positionals: ['vault_policy.p'] });
    expect(parseEngineInvocation([])).toEqual({ globals: [], options: [], positionals: [] });
  });

  it('a flag is set by its name or a true value; the last one given wins', () => {
    const set = (...args: string[]) => flagSet(parseEngineInvocation(['apply', ...args]), 'destroy');
    expect([set('-destroy'), set('-destroy=true'), set('-destroy=1'), set('-destroy=T'), set('-destroy=false'), set('-destroy', '-destroy=0'), set()]).toEqual([
      true, true, true, true, false, false, false,
    ]);
    expect(optionValue(parseEngineInvocation(['plan', '-out', 'a', '-out=b']), 'out')).toBe('b');
  });
});
