import { execFileSync } from 'child_process';
import { AgentEnvTemplate } from '../../../lib/render/agent-env-template';

describe('the env file format', () => {
  it('upper-cases keys into variable names', () => {
    expect(AgentEnvTemplate.variableName('pg_host')).toBe('PG_HOST');
  });

  it('single-quotes values so that a POSIX shell reads them back unchanged', () => {
    const values = ["it's", 'a $HOME `id` "q" \\n', 'multi\nline', '', "''", 'plain'];
    const file = values.map((v, i) => `V${i}=${AgentEnvTemplate.quote(v)}`).join('\n');
    const script = `${file}\nprintf '%s\\0' ${values.map((_, i) => `"$V${i}"`).join(' ')}`;
    const out = execFileSync('sh', ['-c', script], { encoding: 'utf8' });
    expect(out.split('\0').slice(0, -1)).toEqual(values);
  });
});
