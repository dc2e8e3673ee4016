/**
 * Whether this synthesis was started by the cdktf CLI (`cdktf synth`, `cdktf deploy`, ...), from the
 * environment it gives its app: the CLI sets `CDKTF_CONTINUE_SYNTH_ON_ERROR_ANNOTATIONS` (cdktf-cli
 * 0.21, `@cdktf/cli-core` synth-stack.js; `CDKTN_` under CDK Terrain's CLI) and nothing else in a
 * run of `node dist/stacks/main.js` sets it.
 *
 * It matters for one thing: the CLI lists the stack directories of the output before it runs the app
 * and afterwards removes those the new manifest lacks with `fs.rmSync(dir, { recursive: true })`,
 * which throws (ENOENT) when the app removed one already. So under the CLI a retired stack's
 * directory is left for the CLI to remove.
 */
export function startedByCdkCli(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['CDKTF_CONTINUE_SYNTH_ON_ERROR_ANNOTATIONS', 'CDKTN_CONTINUE_SYNTH_ON_ERROR_ANNOTATIONS'].some((name) => env[name] !== undefined);
}
