import { terraformString } from '../render/text-encoders';
import { DeclaredObject } from './declared-object';

/** Name of the file `adopt` writes into a stack directory; kept across re-synthesis, like every file the synthesis does not write itself. */
export const IMPORT_FILE = 'adopt-imports.tf.json';

/** One `import` block: the resource address and the provider's import id. */
export interface ImportBlock {
  /** Resource address (`vault_policy.registry-ci_policy_FD942459`). */
  readonly to: string;
  /** The provider's import id (`registry-ci`, `auth/jwt/role/registry-ci`). */
  readonly id: string;
}

/** The import blocks for objects, sorted by address. */
export function importBlocks(objects: readonly DeclaredObject[]): ImportBlock[] {
  return objects.map((o) => ({ to: o.address, id: o.importId })).sort((a, b) => (a.to < b.to ? -1 : a.to > b.to ? 1 : 0));
}

/**
 * The JSON configuration file holding the import blocks (`import` in Terraform/OpenTofu JSON
 * syntax), byte-identical for the same blocks. An import block is a no-op once its resource is in
 * state, so the file may stay; `adopt` rewrites or removes it on every run.
 */
export function renderImportFile(blocks: readonly ImportBlock[]): string {
  return `${JSON.stringify(
    {
      '//': 'Written by `secretstore-iac adopt`: objects already on the store, imported (then updated in place) instead of created. Re-run adopt to refresh; safe to delete once applied.',
      // The id comes from the store's names: a literal, never a template (lib/render/text-encoders.ts).
      import: blocks.map((b) => ({ to: b.to, id: terraformString(b.id) })),
    },
    null,
    2,
  )}\n`;
}
