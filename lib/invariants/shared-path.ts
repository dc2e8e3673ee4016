import { witnessPath } from '../acl/rule-coverage';
import { RulePath } from '../acl/rule-path';

/** What a rule path asks of one segment of a request path. */
type SegmentTerm =
  | { readonly kind: 'exact'; readonly text: string }
  | { readonly kind: 'any' }
  | { readonly kind: 'prefix'; readonly text: string }
  | { readonly kind: 'free' }
  | { readonly kind: 'end' };

/** The segments of a rule path, and whether anything may follow the last (a trailing `*`). */
function segmentsOf(path: RulePath): { parts: string[]; open: boolean } {
  if (path.kind === 'exact') return { parts: path.key.split('/'), open: false };
  if (path.kind === 'prefix') return { parts: path.key.split('/'), open: true };
  const open = path.key.endsWith('*');
  return { parts: (open ? path.key.slice(0, -1) : path.key).split('/'), open };
}

function termAt(s: { parts: string[]; open: boolean }, k: number): SegmentTerm {
  const last = s.parts.length - 1;
  if (k > last) return s.open ? { kind: 'free' } : { kind: 'end' };
  if (k === last && s.open) return { kind: 'prefix', text: s.parts[k] };
  return s.parts[k] === '+' ? { kind: 'any' } : { kind: 'exact', text: s.parts[k] };
}

/** One segment both terms accept, `stop` when the path may end here for both, undefined when none. */
function joinTerms(a: SegmentTerm, b: SegmentTerm): string | 'stop' | undefined {
  if (a.kind === 'end' || b.kind === 'end') return (a.kind === 'end' || a.kind === 'free') && (b.kind === 'end' || b.kind === 'free') ? 'stop' : undefined;
  if (a.kind === 'free' && b.kind === 'free') return 'stop';
  const [x, y] = a.kind === 'exact' || (a.kind === 'prefix' && b.kind !== 'exact') ? [a, b] : [b, a];
  if (x.kind === 'exact') {
    if (y.kind === 'exact') return x.text === y.text ? x.text : undefined;
    if (y.kind === 'prefix') return x.text.startsWith(y.text) ? x.text : undefined;
    return x.text;
  }
  if (x.kind === 'prefix') {
    if (y.kind === 'prefix') return x.text.startsWith(y.text) ? `${x.text}w` : y.text.startsWith(x.text) ? `${y.text}w` : undefined;
    return `${x.text}w`;
  }
  return 'w';
}

/**
 * Request paths that may be matched by both rule paths, for probing: one built segment by segment
 * so that it satisfies both (`+` and a trailing `*` filled with `w`), and each path's own witness.
 * They are candidates only: whoever uses them asks the store's evaluator (`Acl`) whether each is
 * matched, so a candidate that is not cannot make a wrong claim.
 */
export function sharedPathCandidates(a: RulePath, b: RulePath): string[] {
  const candidates = new Set<string>();
  const sa = segmentsOf(a);
  const sb = segmentsOf(b);
  const parts: string[] = [];
  for (let k = 0; k < sa.parts.length + sb.parts.length + 1; k++) {
    const joined = joinTerms(termAt(sa, k), termAt(sb, k));
    if (joined === undefined) break;
    if (joined === 'stop') {
      candidates.add(parts.join('/'));
      break;
    }
    parts.push(joined);
  }
  candidates.add(witnessPath(a));
  candidates.add(witnessPath(b));
  return [...candidates];
}
