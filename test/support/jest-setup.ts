import { Testing } from 'cdktf';

// Registers cdktf's jest matchers (toHaveResourceWithProperties, toBeValidTerraform, ...).
Testing.setupJest();
