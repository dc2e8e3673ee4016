/**
 * The two operations of the renderers' text templates (the `.sh` files next to them), which stay
 * scripts that shellcheck reads as they are:
 * - a line `#@if NAME` up to a line `#@end` is kept only when `NAME` is on; the two marker lines go;
 * - a line starting `#@ ` documents the template and goes too;
 * - `@@NAME@@` becomes `values[NAME]`, in one pass: an inserted value is never scanned again, and a `$`
 *   in a value is taken literally.
 *
 * @param source the template's file name, for errors
 * @throws Error naming the template and the fault: an unknown or unclosed section, a nested one, or a
 *   placeholder without a value
 */
export function fillTemplate(
  template: string,
  values: Readonly<Record<string, string>>,
  sections: Readonly<Record<string, boolean>>,
  source: string,
): string {
  const kept: string[] = [];
  let open: { name: string; on: boolean } | undefined;
  template.split('\n').forEach((line, i) => {
    const start = /^#@if ([A-Z0-9_]+)$/.exec(line);
    if (start) {
      if (open) throw new Error(`${source}:${i + 1}: #@if ${start[1]} inside #@if ${open.name}`);
      const on = sections[start[1]];
      if (on === undefined) throw new Error(`${source}:${i + 1}: no value for the section ${start[1]}`);
      open = { name: start[1], on };
    } else if (line === '#@end') {
      if (!open) throw new Error(`${source}:${i + 1}: #@end without #@if`);
      open = undefined;
    } else if (!line.startsWith('#@ ') && (!open || open.on)) {
      kept.push(line);
    }
  });
  if (open) throw new Error(`${source}: #@if ${open.name} is never closed`);
  return kept.join('\n').replace(/@@([A-Z0-9_]+)@@/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`${source}: no value for the placeholder @@${name}@@`);
    return value;
  });
}
