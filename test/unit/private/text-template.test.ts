import { fillTemplate } from '../../../lib/private/text-template';

describe('fillTemplate', () => {
  const template = ['#@ about this template', 'a=@@A@@', '#@if ON', 'on @@B@@', '#@end', '#@if OFF', 'off', '#@end', 'end', ''].join('\n');

  it('keeps the sections that are on, drops #@ lines and fills placeholders once, "$" literally', () => {
    expect(fillTemplate(template, { A: '$&@@B@@', B: 'b' }, { ON: true, OFF: false }, 't.sh')).toBe('a=$&@@B@@\non b\nend\n');
  });

  it('names the template and the fault', () => {
    expect(() => fillTemplate(template, { A: 'a' }, { ON: true, OFF: false }, 't.sh')).toThrow('t.sh: no value for the placeholder @@B@@');
    expect(() => fillTemplate(template, { A: 'a', B: 'b' }, { ON: true }, 't.sh')).toThrow('t.sh:6: no value for the section OFF');
    expect(() => fillTemplate('#@if X\n#@if Y\n#@end\n', {}, { X: true, Y: true }, 't.sh')).toThrow('t.sh:2: #@if Y inside #@if X');
    expect(() => fillTemplate('#@end\n', {}, {}, 't.sh')).toThrow('t.sh:1: #@end without #@if');
    expect(() => fillTemplate('#@if X\n', {}, { X: false }, 't.sh')).toThrow('t.sh: #@if X is never closed');
  });
});
