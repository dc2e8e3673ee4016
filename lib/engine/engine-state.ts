import * as path from 'path';
import { runEngineCollected } from './engine-output';

/**
 * The resource addresses in a stack's state, asked of the engine (`state list`) so that every
 * backend the stack configures (local file, PostgreSQL, ...) is read the same way.
 * A stack never applied (no state file yet) has none.
 * @throws Error with the engine's message when the state cannot be read (e.g. `init` not run)
 */
export function stateAddresses(engine: string, stackDir: string, env: NodeJS.ProcessEnv): string[] {
  const { status, stdout, said } = runEngineCollected(engine, ['state', 'list'], stackDir, env);
  // A local backend that was never applied has no state file yet: nothing in state.
  if (status !== 0 && /No state file was found/.test(said)) return [];
  if (status !== 0) {
    throw new Error(
      `cannot read the state of ${stackDir} with \`${path.basename(engine)} state list\` (exit ${status}): ${said.split('\n').filter(Boolean).slice(0, 6).join(' ')}. ` +
        'Run `secretstore-iac tf STACK -- init` first',
    );
  }
  return stdout.split('\n').map((l) => l.trim()).filter(Boolean).sort();
}

/**
 * The address of one resource instance of a state file (`vault_policy.p`, `data.x.y`,
 * `module.m.vault_policy.p["k"]`), as `state list` prints it.
 */
function instanceAddress(resource: any, instance: any): string {
  const base = `${resource.module ? `${resource.module}.` : ''}${resource.mode === 'data' ? 'data.' : ''}${resource.type}.${resource.name}`;
  const key = instance?.index_key;
  return key === undefined ? base : `${base}[${JSON.stringify(key)}]`;
}

/**
 * The tainted resource addresses of a state (the JSON `state pull` prints, format version 4):
 * objects an interrupted apply created but could not finish (the provider wrote the object, then
 * failed, e.g. reading it back from a store that died). The next plan would replace each one.
 */
export function taintedInState(stateJson: string): string[] {
  if (stateJson.trim() === '') return [];
  const state = JSON.parse(stateJson);
  const out: string[] = [];
  for (const resource of Array.isArray(state?.resources) ? state.resources : []) {
    for (const instance of Array.isArray(resource?.instances) ? resource.instances : []) {
      if (instance?.status === 'tainted') out.push(instanceAddress(resource, instance));
    }
  }
  return out.sort();
}

/**
 * The tainted resource addresses of a stack's state, asked of the engine (`state pull`, any backend).
 * @throws Error with the engine's message when the state cannot be read
 */
export function taintedAddresses(engine: string, stackDir: string, env: NodeJS.ProcessEnv): string[] {
  const { status, stdout, said } = runEngineCollected(engine, ['state', 'pull'], stackDir, env);
  if (status !== 0 && /No state file was found/.test(said)) return [];
  if (status !== 0) throw new Error(`cannot read the state of ${stackDir} with \`${path.basename(engine)} state pull\` (exit ${status}): ${firstLines(said)}`);
  return taintedInState(stdout);
}

/**
 * Untaints each address (`ENGINE untaint`, one at a time: the engine takes one address per call), so
 * that the next plan updates the object in place instead of replacing it.
 * @throws Error with the engine's message when an untaint fails (the ones before it are done)
 */
export function untaintAddresses(engine: string, stackDir: string, env: NodeJS.ProcessEnv, addresses: readonly string[]): void {
  for (const address of addresses) {
    const { status, said } = runEngineCollected(engine, ['untaint', address], stackDir, env);
    if (status !== 0) throw new Error(`\`${path.basename(engine)} untaint ${address}\` failed in ${stackDir} (exit ${status}): ${firstLines(said)}`);
  }
}

/**
 * Removes addresses from the state (`ENGINE state rm`, all in one call; the store is not touched):
 * the next plan creates them.
 * @throws Error with the engine's message when it fails
 */
export function forgetAddresses(engine: string, stackDir: string, env: NodeJS.ProcessEnv, addresses: readonly string[]): void {
  if (addresses.length === 0) return;
  const { status, said } = runEngineCollected(engine, ['state', 'rm', ...addresses], stackDir, env);
  if (status !== 0) throw new Error(`\`${path.basename(engine)} state rm\` failed in ${stackDir} (exit ${status}): ${firstLines(said)}`);
}

const firstLines = (said: string): string => said.split('\n').filter(Boolean).slice(0, 6).join(' ');
