// The framework seam, provider bindings: the one module of lib/ that names the hashicorp/vault
// provider classes. The default build re-exports the prebuilt @cdktf/provider-vault; the CDK Terrain
// build (scripts/framework-compare.js) replaces each module name with the bindings generated locally
// from the schema of the provider the toolchain builds (scripts/cdktn-bindings.js). One module per
// resource type, as the package lays them out: loading one never loads the other 300.
// docs/cdk-terrain.md.
export { VaultProvider } from '@cdktf/provider-vault/lib/provider';
export { AuthBackend } from '@cdktf/provider-vault/lib/auth-backend';
export { ApproleAuthBackendRole } from '@cdktf/provider-vault/lib/approle-auth-backend-role';
export { JwtAuthBackend } from '@cdktf/provider-vault/lib/jwt-auth-backend';
export { JwtAuthBackendRole } from '@cdktf/provider-vault/lib/jwt-auth-backend-role';
export { Policy } from '@cdktf/provider-vault/lib/policy';
