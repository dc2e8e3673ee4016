// The framework seam, core classes: the one module of lib/ that names the CDK for Terraform package.
// The default build re-exports cdktf 0.21; the CDK Terrain build (scripts/framework-compare.js)
// compiles the same lib/ with this file's module name replaced by 'cdktn', and nothing else changed.
// Every other file of lib/ imports these classes from here (test/unit/architecture/framework-seam.test.ts).
// docs/cdk-terrain.md.
export {
  App,
  Aspects,
  DefaultTokenResolver,
  LocalBackend,
  PgBackend,
  StringConcat,
  TerraformBackend,
  TerraformElement,
  TerraformOutput,
  TerraformProvider,
  TerraformResource,
  TerraformStack,
  TerraformVariable,
  Token,
  Tokenization,
  ref,
} from 'cdktf';
export type { AppConfig } from 'cdktf';
