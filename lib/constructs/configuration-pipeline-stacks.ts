import { IConstruct } from 'constructs';
import { SecretStoreStack } from './secret-store-stack';
import { oncePerSynthesis } from './synthesis-round';

/**
 * The stacks the configuration repository's pipeline plans and applies: every {@link SecretStoreStack}
 * of the app (ci-access, app-roles and its shards, people, and any a user adds), in construct-tree
 * order. The pipeline file has one plan/apply/drift job per stack of this list, and the pipeline
 * roles' policies are computed from the store objects of the same list: one list, so a stack the
 * pipeline runs is never one its roles were not granted.
 */
export function configurationPipelineStacks(scope: IConstruct): SecretStoreStack[] {
  const root = scope.node.root;
  // Asked by every pipeline role's validation, grants and renderers: one walk of the tree per
  // synthesis round (no stack is declared during one), a copy for each caller.
  return [...oncePerSynthesis(root, 'configuration-pipeline-stacks', () => root.node.findAll().filter((c): c is SecretStoreStack => c instanceof SecretStoreStack))];
}
