import { TerraformStack } from 'cdktf';
import { Construct } from 'constructs';
import { VaultProvider } from '@cdktf/provider-vault/lib/provider';

/**
 * A stack a user adds beside the platform's, with the vault provider and nothing else: where raw
 * provider resources (`vault_policy`, `vault_approle_auth_backend_role`, ...) are declared by hand.
 */
export function userStack(app: Construct, id = 'user'): TerraformStack {
  const stack = new TerraformStack(app, id);
  new VaultProvider(stack, 'vault', {});
  return stack;
}
