import { IConstruct } from 'constructs';
import { SecretStoreStack } from './secret-store-stack';

/**
 * The stacks the configuration repository's pipeline plans and applies: every {@link SecretStoreStack}
 * of the app (ci-access, app-roles and its shards, people, and any a user adds), in construct-tree
 * order. The pipeline file has one plan/apply/drift job per stack of this list, and the pipeline
 * roles' policies are computed from the store objects of the same list: one list, so a stack the
 * pipeline runs is never one its roles were not granted.
 */
export function configurationPipelineStacks(scope: IConstruct): SecretStoreStack[] {
  return scope.node.root.node.findAll().filter((c): c is SecretStoreStack => c instanceof SecretStoreStack);
}
