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
