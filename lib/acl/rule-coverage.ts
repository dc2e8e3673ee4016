import { RulePath } from './rule-path';

/**
 * True when every request path `narrow` matches is also matched by `wide` (`wide` may equal
 * `narrow`). Used to tell that a new wildcard took over what narrower rules granted.
 *
 * Exact for exact and prefix rules; for segment rules it compares segment by segment and answers
 * false when unsure (a segment rule covering a prefix rule, for instance), so it never claims a
 * coverage that does not hold.
 */
export function covers(wide: RulePath, narrow: RulePath): boolean {
  switch (wide.kind) {
    case 'exact':
      return narrow.kind === 'exact' && narrow.key === wide.key;
    case 'prefix':
      // Every path `narrow` matches starts with its literal prefix.
      return narrow.literalPrefix.startsWith(wide.key);
    case 'segment':
      return segmentCovers(wide, narrow);
  }
}

function segmentCovers(wide: RulePath, narrow: RulePath): boolean {
  if (narrow.kind === 'prefix') return false;
  const wideIsPrefix = wide.key.endsWith('*');
  const wideParts = (wideIsPrefix ? wide.key.slice(0, -1) : wide.key).split('/');
  const narrowIsPrefix = narrow.kind === 'segment' && narrow.key.endsWith('*');
  const narrowParts = (narrowIsPrefix ? narrow.key.slice(0, -1) : narrow.key).split('/');
  if (narrowParts.length < wideParts.length) return false;
  if (!wideIsPrefix && (narrowIsPrefix || narrowParts.length !== wideParts.length)) return false;
  const last = wideParts.length - 1;
  for (let i = 0; i < wideParts.length; i++) {
    const w = wideParts[i];
    const n = narrowParts[i];
    const narrowIsWildcard = narrow.kind === 'segment' && n === '+';
    if (w === '+') continue;
    if (wideIsPrefix && i === last) {
      if (narrowIsWildcard) return false;
      if (!n.startsWith(w)) return false;
      continue;
    }
    if (narrowIsWildcard || n !== w) return false;
  }
  return true;
}
