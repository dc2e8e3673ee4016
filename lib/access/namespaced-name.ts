/**
 * A store object's name (an identity `<mount>/<role>`, a policy) with its store namespace, as the
 * access model keys and prints it: the name alone in the root namespace (`''` or undefined), else
 * `<name> (namespace <namespace>)`. Objects of two namespaces are different objects even when their
 * names are equal (`app-x` in `ns1` and `app-x` at the root); the label tells them apart, and no
 * name of the root namespace can be a label of another (role and policy names hold no space).
 */
export function namespacedLabel(name: string, namespace: string | undefined): string {
  return namespace === undefined || namespace === '' ? name : `${name} (namespace ${namespace})`;
}

/** The label of an identity (or anything else with a name and a namespace): {@link namespacedLabel}. */
export function labelOf(object: { readonly name: string; readonly namespace?: string }): string {
  return namespacedLabel(object.name, object.namespace);
}

/**
 * The path a request made in namespace `requested` is checked at by the policies of a token of
 * namespace `token`, as the store checks it (OpenBao prefixes each policy's paths with its
 * namespace and the request's path with the request's namespace): the path itself in the same
 * namespace, the child namespaces' path in front of it for a token of an ancestor namespace;
 * undefined when the token's namespace is neither (the store refuses the token there).
 */
export function pathSeenFrom(token: string, requested: string, path: string): string | undefined {
  if (token === requested) return path;
  if (token === '') return `${requested}/${path}`;
  return requested.startsWith(`${token}/`) ? `${requested.slice(token.length + 1)}/${path}` : undefined;
}
