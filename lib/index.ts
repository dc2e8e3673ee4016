// Domain model: plain TypeScript, no cdktf.
export * from './model/capability';
export * from './model/duration';
export * from './model/grant';
export * from './model/identifier-name';
export * from './model/jwt-key-source';
export * from './model/kv-mount';
export * from './model/kv-path';
export * from './model/platform-settings';
export * from './model/policy-document';
export * from './model/registry-permission-scope';
export * from './model/secret-declaration';
export * from './model/validation-problem';
// Renderers: the model to text (policies, CI template and login script, agent files); no cdktf.
export * from './render/agent-entrypoint';
export * from './render/agent-env-template';
export * from './render/agent-hcl';
export * from './render/ci-login-script';
export * from './render/gitlab-ci-template';
export * from './render/policy-hcl';
// Constructs: render the model with @cdktf/provider-vault.
export * from './constructs/agent-configuration';
export * from './constructs/approle-application';
export * from './constructs/approle-auth';
export * from './constructs/ci-jwt-auth';
export * from './constructs/ci-jwt-role';
export * from './constructs/ci-login-template';
export * from './constructs/ci-secret';
export * from './constructs/postgres-state-backend';
export * from './constructs/registry-service-account';
export * from './constructs/secret-store-app';
export * from './constructs/secret-store-stack';
export * from './constructs/store-policy';
export * from './store/store-address';
// Talking to a running store (operator commands).
export * from './store/approle-credentials-file';
export * from './store/approle-operator';
export * from './store/store-client';
export * from './constructs/synthesis-artifact';
// Platform rules: checked across all stacks at every synthesis.
export * from './rules/platform-declarations';
export * from './rules/platform-rule';
export * from './rules/platform-rules';
export * from './rules/rules-document';
export * from './rules/ssi-r1-unique-role-names';
export * from './rules/ssi-r2-unique-policy-names';
export * from './rules/ssi-r3-distinct-permission-scopes';
export * from './rules/ssi-r4-unique-accounts-and-ci-paths';
export * from './rules/ssi-r5-no-cross-application-access';
export * from './rules/ssi-r6-ci-secrets-outside-applications';
export * from './rules/ssi-r7-distinct-auth-mount-paths';
export * from './rules/ssi-r8-ci-secrets-have-readers';
export * from './rules/ssi-r9-reserved-store-names';
export * from './rules/ssi-r10-claims-pin-organisation';
