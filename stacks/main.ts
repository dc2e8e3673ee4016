import * as path from 'path';
import { definePlatform, SecretStoreApp, SecretStoreValidationError } from 'secretstore-iac';
import { platformConfig } from './platform.config';

// Entry point of `npm run synth` (and of `cdktf synth` through cdktf.json).
// define() turns a declaration that throws (two constructs with one id) into a reported problem.
const app = new SecretStoreApp().define((a) => definePlatform(a, platformConfig));
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
