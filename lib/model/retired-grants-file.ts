/**
 * The engine override file `secretstore-iac moves` writes into a stack of HEAD whose roles BASE
 * attached policies of a retired stack (OpenTofu and Terraform merge `*_override.tf.json` over the
 * stack's own files): the roles keep those grants until the retired stack's removal is applied. Here,
 * below both its writer (lib/reconcile) and the pipeline that ends it (lib/render), one name for both.
 */
export const RETIRED_GRANTS_FILE = 'retired-stack-grants_override.tf.json';
