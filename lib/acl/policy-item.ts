/** A JSON-like value, as the parsers give it. */
export type PolicyValue = null | boolean | number | string | PolicyValue[] | { [key: string]: PolicyValue };

/**
 * One top-level item of a policy, the unit the store's HCL 1 decoder works with: its keys
 * (`["path", "secret/data/app/*"]`, `["name"]`) and its value (the block body for a path).
 * A path item may carry more labels after the path; the store ignores them.
 */
export interface PolicyItem {
  readonly keys: readonly string[];
  readonly value: PolicyValue;
}

/** True for a JSON object (not an array, not null). */
export function isPolicyObject(value: unknown): value is { [key: string]: PolicyValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
