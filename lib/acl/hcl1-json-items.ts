import { PolicyItem, PolicyValue, isPolicyObject } from './policy-item';

/**
 * The items the store's HCL 1 decoder sees in a JSON policy (`hashicorp/hcl` v1,
 * `json/parser/flatten.go`), from the value `JSON.parse` gives.
 *
 * HCL 1 turns nested JSON objects into block labels: an item whose value is a non-empty object
 * whose values are all objects is split into one item per entry, the entry's key appended to the
 * item's keys; an item whose value is a non-empty list of objects is split into one item per
 * element. Splitting repeats until no item qualifies. Consequences the store really shows:
 * `{"path": {"a": {...}}}` and `{"path": [{"a": {...}}]}` are the rule `a`; a block body given as
 * a list (`{"path": {"a": [{...}]}}`) is not split and is refused; `{"path": {"a": {"b": {...}}}}`
 * is the rule `a` (the extra label is ignored); and
 * `{"path": {"a": {"allowed_parameters": {"x": ["y"]}}}}` is split once too often and refused.
 *
 * JSON itself is read with `JSON.parse`; duplicate keys in one JSON object (which HCL 1 keeps and
 * `JSON.parse` collapses) are the one known difference.
 */
export function hcl1JsonItems(root: PolicyValue): PolicyItem[] {
  if (!isPolicyObject(root)) return [{ keys: [], value: root }];
  const done: PolicyItem[] = [];
  const pending: PolicyItem[] = Object.entries(root).map(([key, value]) => ({ keys: [key], value }));
  while (pending.length > 0) {
    const item = pending.shift()!;
    const { value } = item;
    if (Array.isArray(value) && value.length > 0 && value.every(isPolicyObject)) {
      pending.unshift(...value.map((element) => ({ keys: item.keys, value: element })));
    } else if (isPolicyObject(value) && Object.keys(value).length > 0 && Object.values(value).every(isPolicyObject)) {
      pending.unshift(...Object.entries(value).map(([key, v]) => ({ keys: [...item.keys, key], value: v })));
    } else {
      done.push(item);
    }
  }
  return done;
}
