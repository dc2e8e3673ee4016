import { jsonDocument } from './text-encoders';

/**
 * The tsconfig.json of a configuration repository: strict, CommonJS (as the package), `stacks/`
 * compiled to `dist/stacks/`, where package.json's `synth` and cdktf.json's `app` run it.
 */
export function renderConfigurationTsconfig(): string {
  return jsonDocument({
    compilerOptions: {
      target: 'ES2022',
      module: 'commonjs',
      lib: ['ES2022'],
      strict: true,
      noImplicitReturns: true,
      noFallthroughCasesInSwitch: true,
      esModuleInterop: true,
      skipLibCheck: true,
      forceConsistentCasingInFileNames: true,
      outDir: 'dist',
      rootDir: '.',
      types: ['node'],
    },
    include: ['stacks/**/*.ts'],
  });
}
