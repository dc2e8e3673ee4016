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
// Constructs: render the model with @cdktf/provider-vault.
export * from './agent-configuration';
export * from './agent-env-template';
export * from './approle-application';
export * from './approle-auth';
export * from './ci-jwt-auth';
export * from './ci-jwt-role';
export * from './ci-login-script';
export * from './ci-login-template';
export * from './ci-secret';
export * from './platform-rules';
export * from './postgres-state-backend';
export * from './registry-service-account';
export * from './secret-store-app';
export * from './secret-store-stack';
export * from './store-address';
// Talking to a running store (operator commands).
export * from './approle-credentials-file';
export * from './approle-operator';
export * from './store-client';
export * from './synthesis-artifact';
