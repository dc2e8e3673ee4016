/**
 * True when some request path is matched by both ACL rule paths, matched the way the store
 * matches them: one leading `/` stripped; a path ending in `*` is a plain string prefix (not
 * segment-aware: `secret/data/app*` also matches `secret/data/app-x`); any other path matches
 * itself only.
 *
 * Only exact and `*` prefix paths are compared, the kinds the library writes for KV secrets; a
 * `+` segment wildcard is compared as literal text.
 */
export function aclPathsOverlap(a: string, b: string): boolean {
  const x = parse(a);
  const y = parse(b);
  if (x.prefix && y.prefix) return x.key.startsWith(y.key) || y.key.startsWith(x.key);
  if (x.prefix) return y.key.startsWith(x.key);
  if (y.prefix) return x.key.startsWith(y.key);
  return x.key === y.key;
}

function parse(path: string): { key: string; prefix: boolean } {
  const p = path.startsWith('/') ? path.slice(1) : path;
  return p.endsWith('*') ? { key: p.slice(0, -1), prefix: true } : { key: p, prefix: false };
}
