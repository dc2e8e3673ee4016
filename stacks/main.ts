import * as path from 'path';
import { definePlatform, postgresState, SecretStoreApp, SecretStoreValidationError } from 'secretstore-iac';
import { platformConfig } from './platform.config';

// Entry point of `npm run synth` (and of `cdktf synth` through cdktf.json).
// define() turns a declaration that throws (two constructs with one id) into a reported problem.
// The state in PostgreSQL, shared by every pipeline job and operator: the engine reads the connection
// from PG_CONN_STR when it plans and applies (never written to a file); synthesis needs no database.
const app = new SecretStoreApp().define((a) => definePlatform(a, platformConfig, postgresState()));
try {
  app.synth();
} catch (error) {
  if (error instanceof SecretStoreValidationError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
const relative = path.relative(process.cwd(), app.finalOutdir) || '.';
const stacks = app.node.children.map((c) => c.node.id).sort();
console.log(`synthesized ${relative}/stacks/{${stacks.join(',')}}/cdk.tf.json`);
app.writtenArtifacts.forEach((file) => console.log(`            ${relative}/${file}`));
