#!/usr/bin/env node
// CDK Terrain (cdktn) and its hashicorp/vault provider bindings, made locally and offline, cached in
// the toolchain cache (docs/cdk-terrain.md):
//   1. cdktn, @cdktn/provider-generator and the constructs version cdktn needs, exactly as
//      tools/cdktn/package-lock.json pins them, installed with `npm ci` into
//      $CACHE/cdktn/npm-<cdktn version>-<lock hash>/ (never into the project's node_modules: cdktn
//      needs constructs >= 10.6, the default cdktf build pins 10.4.2);
//   2. the provider's schema from the provider the toolchain built (`tofu init` from the local
//      filesystem mirror, `tofu providers schema -json`: no registry);
//   3. TypeScript bindings generated from that schema by @cdktn/provider-generator (what `cdktn get`
//      runs), into $CACHE/cdktn/bindings/vault-<provider version>_cdktn-<cdktn version>_<hash>/.
//      CI's shortcut: only the resource types the seam lib/framework/vault-provider.ts names (read
//      from its module names, so the list lives in one place); `--all` generates every resource,
//      data source and ephemeral resource, as a user's `cdktn get` does.
// Each step is skipped when its cache entry is there. Usage: node scripts/cdktn-bindings.js [--all]
// (prints the bindings directory); scripts/framework-compare.js requires it.
'use strict';
const { execFileSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');
const CACHE = process.env.SECRETSTORE_IAC_CACHE || path.join(os.homedir(), '.cache', 'secretstore-iac');
const TOOLS = path.join(ROOT, 'tools', 'cdktn');
const SEAM = path.join(ROOT, 'lib', 'framework', 'vault-provider.ts');
/** The module names of the prebuilt bindings in the seam: `@cdktf/provider-vault/lib/<module>`. */
const PREBUILT_MODULE = /'@cdktf\/provider-vault\/lib\/([a-z0-9-]+)'/g;

const sha = (...parts) => {
  const h = crypto.createHash('sha256');
  parts.forEach((p) => h.update(p));
  return h.digest('hex').slice(0, 12);
};
const log = (msg) => process.stderr.write(`[cdktn] ${msg}\n`);

/** The variables of $CACHE/toolchain.env (written by scripts/toolchain.sh), the environment first. */
function toolchainEnv() {
  const file = path.join(CACHE, 'toolchain.env');
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run bash scripts/toolchain.sh first (it builds tofu and the provider mirror)`);
  const env = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2].replace(/^'(.*)'$/, '$1').replace(/\\(.)/g, '$1');
  }
  return { tofu: process.env.SECRETSTORE_IAC_TOFU || env.SECRETSTORE_IAC_TOFU, tofurc: env.TF_CLI_CONFIG_FILE };
}

/** Step 1: the pinned cdktn packages, installed once per lock file. Returns their directory. */
function ensureCdktnPackages() {
  const manifest = fs.readFileSync(path.join(TOOLS, 'package.json'), 'utf8');
  const lock = fs.readFileSync(path.join(TOOLS, 'package-lock.json'), 'utf8');
  const cdktnVersion = JSON.parse(manifest).dependencies.cdktn;
  const dir = path.join(CACHE, 'cdktn', `npm-${cdktnVersion}-${sha(manifest, lock)}`);
  const done = path.join(dir, '.installed');
  if (!fs.existsSync(done)) {
    const t = Date.now();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), manifest);
    fs.writeFileSync(path.join(dir, 'package-lock.json'), lock);
    // --ignore-scripts: nothing of these packages needs an install script to generate or synthesize.
    execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    fs.writeFileSync(done, `${new Date().toISOString()}\n`);
    log(`installed cdktn ${cdktnVersion} (tools/cdktn/package-lock.json) into ${dir} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
  const installed = JSON.parse(fs.readFileSync(path.join(dir, 'node_modules', 'cdktn', 'package.json'), 'utf8')).version;
  return { npmDir: dir, cdktnVersion: installed };
}

/** Step 2: the schema of the hashicorp/vault provider in the local mirror, and its version. */
function providerSchema() {
  const { tofu, tofurc } = toolchainEnv();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-cdktn-schema-'));
  try {
    fs.writeFileSync(path.join(dir, 'main.tf.json'), JSON.stringify({ terraform: { required_providers: { vault: { source: 'hashicorp/vault' } } } }));
    // The mirror only (tofurc has no direct block): offline. This machine's own TF_CLI_CONFIG_FILE is ignored.
    const env = { ...process.env, TF_CLI_CONFIG_FILE: tofurc, TF_PLUGIN_CACHE_DIR: path.join(CACHE, 'plugin-cache'), TF_IN_AUTOMATION: '1' };
    execFileSync(tofu, ['init', '-input=false', '-no-color'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'inherit'] });
    const selections = JSON.parse(execFileSync(tofu, ['version', '-json'], { cwd: dir, env, encoding: 'utf8' })).provider_selections;
    const fqpn = Object.keys(selections).find((k) => k.endsWith('/hashicorp/vault'));
    const schema = JSON.parse(execFileSync(tofu, ['providers', 'schema', '-json'], { cwd: dir, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }));
    return { fqpn, providerVersion: selections[fqpn], schema };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The resource types the seam uses, from its module names (`policy` -> `vault_policy`; `provider`: the provider block). */
function seamModules() {
  return [...fs.readFileSync(SEAM, 'utf8').matchAll(PREBUILT_MODULE)].map((m) => m[1]);
}

/** The schema cut down to what to generate: every type (`all`) or the seam's resource types. */
function filterSchema(schema, fqpn, providerVersion, all) {
  const provider = schema.provider_schemas[fqpn];
  const kept = all
    ? provider
    : {
        provider: provider.provider,
        resource_schemas: Object.fromEntries(
          seamModules()
            .filter((m) => m !== 'provider')
            .map((m) => {
              const type = `vault_${m.replace(/-/g, '_')}`;
              if (!provider.resource_schemas[type]) throw new Error(`${SEAM} names ${m}, but provider ${providerVersion} has no resource ${type}`);
              return [type, provider.resource_schemas[type]];
            }),
        ),
      };
  // provider_versions is what `cdktn get` adds to the engine's schema: the generated classes record it.
  return { format_version: schema.format_version, provider_schemas: { [fqpn]: kept }, provider_versions: { [fqpn]: providerVersion } };
}

/**
 * Steps 1-3: the cdktn packages and the generated bindings, made when not cached.
 * @returns the directories and the versions they were made with
 */
async function ensureBindings({ all = false } = {}) {
  const t = Date.now();
  const { npmDir, cdktnVersion } = ensureCdktnPackages();
  const { fqpn, providerVersion, schema } = providerSchema();
  const filtered = filterSchema(schema, fqpn, providerVersion, all);
  const text = JSON.stringify(filtered);
  const bindingsDir = path.join(CACHE, 'cdktn', 'bindings', `vault-${providerVersion}_cdktn-${cdktnVersion}_${all ? 'all-' : ''}${sha(text, cdktnVersion)}`);
  if (!fs.existsSync(path.join(bindingsDir, '.generated'))) {
    const g = Date.now();
    const tmp = `${bindingsDir}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    // The generator's libraries look for a CLI configuration when loaded: give them the mirror's.
    process.env.TF_CLI_CONFIG_FILE = toolchainEnv().tofurc;
    const req = (m) => require(require.resolve(m, { paths: [npmDir] }));
    const { CodeMaker, TerraformProviderGenerator } = req('@cdktn/provider-generator');
    const { ConstructsMakerProviderTarget, TerraformProviderConstraint, LANGUAGES } = req('@cdktn/commons');
    const code = new CodeMaker();
    const generator = new TerraformProviderGenerator(code, filtered);
    // The constraint the prebuilt @cdktf/provider-vault was generated with: source `hashicorp/vault`, `~> 5.0`.
    generator.generate(new ConstructsMakerProviderTarget(new TerraformProviderConstraint('hashicorp/vault@~> 5.0'), LANGUAGES[0]));
    await code.save(tmp);
    fs.writeFileSync(path.join(tmp, 'schema.json'), `${text}\n`);
    fs.writeFileSync(path.join(tmp, '.generated'), `${fqpn} ${providerVersion}, cdktn ${cdktnVersion}\n`);
    fs.rmSync(bindingsDir, { recursive: true, force: true });
    fs.renameSync(tmp, bindingsDir);
    log(`generated the vault ${providerVersion} bindings (${all ? 'every type' : seamModules().join(', ')}) with cdktn ${cdktnVersion} in ${((Date.now() - g) / 1000).toFixed(1)} s: ${bindingsDir}`);
  } else {
    log(`bindings cached: ${bindingsDir}`);
  }
  for (const m of seamModules()) {
    if (!fs.existsSync(path.join(bindingsDir, 'providers', 'vault', m, 'index.ts'))) throw new Error(`the generated bindings have no module ${m} (${SEAM} needs it)`);
  }
  log(`cdktn ready in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  return { npmDir, cdktnVersion, providerVersion, bindingsDir: path.join(bindingsDir, 'providers', 'vault'), modules: seamModules() };
}

module.exports = { ensureBindings, PREBUILT_MODULE };

if (require.main === module) {
  ensureBindings({ all: process.argv.includes('--all') }).then(
    (b) => console.log(b.bindingsDir),
    (e) => {
      console.error(`[cdktn] ERROR: ${e.message}`);
      process.exit(1);
    },
  );
}
