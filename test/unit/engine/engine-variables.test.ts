/**
 * Issues 36 and 45: the engine's variables, one table (lib/engine/engine-variables.ts) with what each
 * does and what an engine run gets of it. The run's environment is built from an allowlist
 * (lib/engine/engine-run-environment.ts, test/unit/engine/engine-run-environment.test.ts): the rows
 * that pass are part of it; what changes the plan, the apply or the state is dropped. On a real store
 * and both engines: test/store/engine-tampering.store.test.ts.
 */
import * as fs from 'fs';
import * as path from 'path';
import { passesToEngine } from '../../../lib/engine/engine-run-environment';
import { ENGINE_ENVIRONMENT, engineVariable } from '../../../lib/engine/engine-variables';
import { REPO_ROOT } from '../../support/paths';

describe('the table of engine environment variables', () => {
  it('drops what changes the plan, the apply or the state: TF_CLI_ARGS, every TF_CLI_ARGS_*, TF_WORKSPACE, TF_DATA_DIR, TF_REATTACH_PROVIDERS, the lock-file bypass, the plugin cache, TF_ENCRYPTION', () => {
    for (const name of ['TF_CLI_ARGS', 'TF_CLI_ARGS_apply', 'TF_CLI_ARGS_plan', 'TF_CLI_ARGS_destroy', 'TF_CLI_ARGS_import', 'TF_WORKSPACE', 'TF_DATA_DIR', 'TF_REATTACH_PROVIDERS', 'TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE', 'TF_PLUGIN_CACHE_DIR', 'TF_ENCRYPTION']) {
      expect({ name, verdict: engineVariable(name)?.verdict, passes: passesToEngine(name) }).toEqual({ name, verdict: 'dropped', passes: false });
    }
  });

  it('passes what only changes output, prompts and retries; input variables and registry tokens unprinted; the CLI configuration is the tool\'s', () => {
    for (const name of ['TF_IN_AUTOMATION', 'TF_INPUT', 'TF_LOG', 'TF_LOG_PATH', 'TF_LOG_CORE', 'TF_LOG_PROVIDER', 'TF_REGISTRY_CLIENT_TIMEOUT']) {
      expect({ name, verdict: engineVariable(name)?.verdict, passes: passesToEngine(name) }).toEqual({ name, verdict: 'passed', passes: true });
    }
    expect(engineVariable('TF_VAR_region')?.verdict).toBe('passed-unprinted');
    expect(engineVariable('TF_TOKEN_app_terraform_io')?.verdict).toBe('passed-unprinted');
    for (const name of ['TF_CLI_CONFIG_FILE', 'TERRAFORM_CONFIG']) expect({ name, verdict: engineVariable(name)?.verdict, passes: passesToEngine(name) }).toEqual({ name, verdict: 'set', passes: false });
    // An exact name wins over a prefix (TF_CLI_ARGS is not a TF_CLI_ARGS_ command).
    expect(engineVariable('TF_CLI_ARGS')?.prefix).toBeUndefined();
  });

  it('every dropped row says its effect and the fix; names are unique', () => {
    for (const row of ENGINE_ENVIRONMENT.filter((r) => r.verdict === 'dropped')) expect({ name: row.name, fix: (row.fix ?? '').length > 10, effect: row.effect.length > 10 }).toEqual({ name: row.name, fix: true, effect: true });
    expect(new Set(ENGINE_ENVIRONMENT.map((r) => r.name)).size).toBe(ENGINE_ENVIRONMENT.length);
  });

  it('docs/reference.md lists exactly the table\'s variables, each with its verdict', () => {
    const docs = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'reference.md'), 'utf8');
    const rows = [...docs.matchAll(/^\| `((?:TF|PG|TERRAFORM)_[A-Z_]+?)(\*)?` \| (?:both|OpenTofu|Terraform) \| (dropped|passed, never printed|passed|set by the tool)[^|]*\|/gm)].map((m) => `${m[1]}${m[2] ?? ''} ${m[3]}`);
    const verdict = { dropped: 'dropped', passed: 'passed', 'passed-unprinted': 'passed, never printed', set: 'set by the tool' };
    expect(rows.sort()).toEqual(ENGINE_ENVIRONMENT.map((r) => `${r.name}${r.prefix ? '*' : ''} ${verdict[r.verdict]}`).sort());
  });
});
