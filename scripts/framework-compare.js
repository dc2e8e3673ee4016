#!/usr/bin/env node
// `npm run test:frameworks`: the same lib/ and stacks/ on cdktf (the default) and on CDK Terrain
// (cdktn), synthesizing the same cases, with outputs compared file by file (docs/cdk-terrain.md).
//
//   1. scripts/cdktn-bindings.js: cdktn and the vault bindings generated from the toolchain's
//      provider (cached).
//   2. The default build: tsc -p tsconfig.json into <tmp>/cdktf/dist (the project's own dist/ is left alone).
//   3. The CDK Terrain build: lib/, stacks/, bin/, examples/ copied, the seam lib/framework/
//      rewritten (module 'cdktf' -> 'cdktn', '@cdktf/provider-vault/lib/<m>' -> the generated
//      bindings; nothing else of lib/ is touched), compiled with the same compiler options, and kept
//      in $CACHE/cdktn/builds/<digest of the sources> for test/store/cdktn.store.test.ts.
//   4. Every case synthesized by both builds (in separate processes): the platform of stacks/main.ts,
//      the README examples, people + PostgreSQL state, 100 applications in 10 hash shards.
//   5. Every file compared byte for byte. The only difference allowed is ALLOWED below, the framework's
//      own version in its metadata; each allowed difference is printed, any other one fails (exit 1).
//
// Options: --keep (leave <tmp> for inspection), --mutate-cdktn (a self-test: changes one policy
// rule in the CDK Terrain build only, which must make the comparison fail).
'use strict';
const { execFileSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');
const FRAMEWORKS = ['cdktf', 'cdktn'];
const CASES = ['platform', 'example-add-application', 'example-add-registry-service-account', 'example-registry-account-in-config', 'people-postgres-state', 'sharded-100-applications'];

/**
 * The differences the comparison allows in the JSON files the framework writes, and nothing else:
 *   1. the framework writes its own version into the metadata of every stack
 *      (`"//".metadata.version` of `stacks/<stack>/cdk.tf.json`) and into `manifest.json` (`version`).
 *      Neither reaches the engine: `//` is a comment key for OpenTofu and Terraform, and
 *      manifest.json is read by the framework's CLI only;
 *   2. JSON layout of empty arrays and objects: cdktf 0.21 writes `[` and `]` on two lines, cdktn on
 *      one (`[]`). Only whitespace between an opening and its closing bracket; the values are equal.
 * Each file with an allowed difference must also parse to the same JSON value once the version is
 * taken out, and every other file (policies, agent files, CI files) must be byte-identical.
 */
const ALLOWED = [
  { file: /^stacks\/[^/]+\/cdk\.tf\.json$/, path: ['//', 'metadata', 'version'] },
  { file: /^manifest\.json$/, path: ['version'] },
];
/** Rule 2: an empty array or object written on two lines, as cdktf 0.21 does. */
const EMPTY_ON_TWO_LINES = /([[{])\n *([\]}])/g;

const log = (msg) => console.log(`[frameworks] ${msg}`);
const secs = (t) => `${((Date.now() - t) / 1000).toFixed(1)} s`;
const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

// ---- synthesis of the cases (runs in a child process, once per build) ------------------------------
function synthCases(buildRoot, outRoot) {
  const dist = path.join(buildRoot, 'dist');
  const lib = require(path.join(dist, 'lib', 'index.js'));
  const { definePlatform } = require(path.join(dist, 'lib', 'platform', 'platform.js'));
  const { platformConfig } = require(path.join(dist, 'stacks', 'platform.config.js'));
  const example = (name) => require(path.join(dist, 'examples', `${name}.js`));
  const synth = (name, config, extend, stateBackend) => {
    const app = new lib.SecretStoreApp({ outdir: path.join(outRoot, name, 'cdktf.out') });
    // The state in PostgreSQL, as stacks/main.ts declares it: the shipped configuration has a pipeline.
    const platform = definePlatform(app, config, stateBackend ?? lib.postgresState());
    extend?.(platform);
    app.synth();
  };
  const applications = {};
  for (let i = 0; i < 100; i++) {
    const environment = ['dev', 'staging', 'prod'][i % 3];
    applications[`app${String(i).padStart(3, '0')}-${environment}`] = { name: `app${String(i).padStart(3, '0')}`, environment, secrets: { database: ['pg_user', 'pg_password'] } };
  }
  for (const name of CASES) {
    if (name === 'platform') {
      // stacks/main.ts itself, as `npm run synth` runs it.
      execFileSync(process.execPath, [path.join(dist, 'stacks', 'main.js')], { cwd: buildRoot, env: { ...process.env, CDKTF_OUTDIR: path.join(outRoot, name, 'cdktf.out') }, stdio: ['ignore', 'ignore', 'inherit'] });
    } else if (name === 'example-add-application') synth(name, platformConfig, (p) => example('add-application').addBillingApplication(p.appRoles));
    else if (name === 'example-add-registry-service-account') synth(name, platformConfig, (p) => example('add-registry-service-account').addHelmAccount(p.ciAccess));
    else if (name === 'example-registry-account-in-config') synth(name, example('registry-account-in-config').configWithMirrorAccount);
    else if (name === 'people-postgres-state') {
      const people = {
        discoveryUrl: 'https://sso.acme.example/application/o/secretstore/',
        clientId: 'secretstore',
        storeUrl: 'https://vault.acme.example',
        groups: { 'platform-admins': { groups: ['platform-admins'], reads: [{ path: 'team/runbooks', subtree: true }] }, developers: { groups: ['developers'] } },
      };
      synth(name, { ...platformConfig, people }, undefined, lib.postgresState());
    } else if (name === 'sharded-100-applications') synth(name, { ...platformConfig, applications, applicationSharding: { by: 'hash', shards: 10 } });
    else throw new Error(`unknown case ${name}`);
  }
}

// ---- the two builds ---------------------------------------------------------------------------------
function copyTree(from, to, filter = () => true) {
  for (const e of fs.readdirSync(from, { withFileTypes: true })) {
    const a = path.join(from, e.name);
    const b = path.join(to, e.name);
    if (!filter(a, e)) continue;
    if (e.isDirectory()) {
      fs.mkdirSync(b, { recursive: true });
      copyTree(a, b, filter);
    } else fs.copyFileSync(a, b);
  }
}

/** The compiler options of tsconfig.json, as the builds use them. */
function compilerOptions() {
  const own = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8')).compilerOptions;
  return { ...own, types: ['node'], typeRoots: [path.join(ROOT, 'node_modules', '@types')], incremental: false };
}

/** The package.json a build's stacks/ and examples/ resolve `secretstore-iac` with (self-reference). */
function selfPackage() {
  const { name, version, main, types, exports } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  return `${JSON.stringify({ name, version, private: true, main, types, exports }, null, 2)}\n`;
}

/** Rewrites the seam for CDK Terrain; every other file stays byte for byte what it is. */
function cdktnSeam(dir, bindings, mutate) {
  const core = path.join(dir, 'lib', 'framework', 'framework.ts');
  const text = fs.readFileSync(core, 'utf8');
  if (!text.includes("from 'cdktf';")) throw new Error(`${core}: no import from 'cdktf' to rewrite`);
  fs.writeFileSync(core, text.replace(/from 'cdktf';/g, "from 'cdktn';"));
  const vault = path.join(dir, 'lib', 'framework', 'vault-provider.ts');
  const rewritten = fs.readFileSync(vault, 'utf8').replace(/'@cdktf\/provider-vault\/lib\/([a-z0-9-]+)'/g, "'../../gen/vault/$1'");
  fs.writeFileSync(vault, rewritten);
  copyTree(bindings, path.join(dir, 'gen', 'vault'), (p, e) => e.isDirectory() || p.endsWith('.ts'));
  for (const file of [core, vault]) {
    if (/'cdktf'|'@cdktf\//.test(fs.readFileSync(file, 'utf8'))) throw new Error(`${file} still names cdktf after the rewrite`);
  }
  if (mutate) {
    // Self-test: one difference a framework could introduce (a policy rule's capability) must fail the comparison.
    const policy = path.join(dir, 'lib', 'render', 'policy-hcl.ts');
    const before = fs.readFileSync(policy, 'utf8');
    const after = before.replace('{\\n  capabilities = [', '{\\n  capabilities  = [');
    if (after === before) throw new Error(`--mutate-cdktn: nothing to change in ${policy}`);
    fs.writeFileSync(policy, after);
  }
}

function build(framework, dir, bindings, mutate) {
  const t = Date.now();
  fs.mkdirSync(dir, { recursive: true });
  for (const sub of ['lib', 'stacks', 'bin', 'examples']) {
    fs.mkdirSync(path.join(dir, sub), { recursive: true });
    copyTree(path.join(ROOT, sub), path.join(dir, sub));
  }
  fs.writeFileSync(path.join(dir, 'package.json'), selfPackage());
  let nodeModules = path.join(ROOT, 'node_modules');
  if (framework === 'cdktn') {
    cdktnSeam(dir, bindings.bindingsDir, mutate);
    nodeModules = path.join(bindings.npmDir, 'node_modules');
  }
  fs.symlinkSync(nodeModules, path.join(dir, 'node_modules'), 'dir');
  const include = ['lib/**/*.ts', 'stacks/**/*.ts', 'bin/**/*.ts', 'examples/**/*.ts', ...(framework === 'cdktn' ? ['gen/**/*.ts'] : [])];
  const options = { ...compilerOptions(), rootDir: '.', outDir: 'dist', paths: { 'secretstore-iac': ['./lib/index.ts'] } };
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, include }, null, 2));
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  } catch (e) {
    throw new Error(`${framework}: the compiler failed:\n${e.stdout}${e.stderr}`);
  }
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'copy-assets.js'), path.join(dir, 'dist')], { cwd: dir });
  // copy-assets copies from the repository's lib/: the same files as the copy here.
  const version = JSON.parse(fs.readFileSync(path.join(dir, 'node_modules', framework, 'package.json'), 'utf8')).version;
  log(`${framework} ${version}: compiled lib/, stacks/, bin/, examples/${framework === 'cdktn' ? ' and the generated bindings' : ''} in ${secs(t)}`);
  return version;
}

/** Every file below the repository folders a build compiles, with their contents: the build's key. */
function sourcesDigest(extra) {
  const h = crypto.createHash('sha256');
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else h.update(`${path.relative(ROOT, p)}\0`).update(fs.readFileSync(p)).update('\0');
    }
  };
  ['lib', 'stacks', 'bin', 'examples'].forEach((d) => walk(path.join(ROOT, d)));
  ['tsconfig.json', 'package.json', 'scripts/framework-compare.js', 'node_modules/typescript/package.json'].forEach((f) => h.update(fs.readFileSync(path.join(ROOT, f))));
  h.update(extra);
  return h.digest('hex').slice(0, 16);
}

/**
 * The CDK Terrain build of the current sources, compiled once and kept in the toolchain cache
 * ($CACHE/cdktn/builds/<digest of the sources, the bindings and the compiler>/): the comparison
 * makes it, the store test (once per store) finds it. The three newest builds are kept.
 * @returns the build directory and the cdktn version
 */
function cachedCdktnBuild(bindings) {
  const cache = path.join(path.dirname(bindings.npmDir), 'builds');
  const dir = path.join(cache, sourcesDigest(`${bindings.bindingsDir}\0${bindings.npmDir}`));
  const version = JSON.parse(fs.readFileSync(path.join(bindings.npmDir, 'node_modules', 'cdktn', 'package.json'), 'utf8')).version;
  if (fs.existsSync(path.join(dir, '.built'))) {
    log(`cdktn ${version}: the build of these sources is cached (${dir})`);
    return { dir, version };
  }
  fs.mkdirSync(cache, { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  build('cdktn', tmp, bindings, false);
  fs.writeFileSync(path.join(tmp, '.built'), `${new Date().toISOString()}\n`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(tmp, dir);
  const builds = fs.readdirSync(cache).filter((d) => /^[0-9a-f]{16}$/.test(d)).map((d) => [d, fs.statSync(path.join(cache, d)).mtimeMs]);
  builds.sort((a, b) => b[1] - a[1]).slice(3).forEach(([d]) => fs.rmSync(path.join(cache, d), { recursive: true, force: true }));
  return { dir, version };
}

// ---- comparison --------------------------------------------------------------------------------------
function files(dir) {
  const out = [];
  const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).forEach((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : out.push(path.relative(dir, path.join(d, e.name)))));
  walk(dir);
  return out.sort();
}

const getAt = (obj, keys) => keys.reduce((o, k) => (o && typeof o === 'object' ? o[k] : undefined), obj);
function deleteAt(obj, keys) {
  const parent = getAt(obj, keys.slice(0, -1));
  if (parent && typeof parent === 'object') delete parent[keys[keys.length - 1]];
}

/** The first line where two texts differ, with its neighbours, for the failure message. */
function firstDifference(a, b) {
  const la = a.split('\n');
  const lb = b.split('\n');
  let i = 0;
  while (i < la.length && la[i] === lb[i]) i++;
  const context = la.slice(Math.max(0, i - 2), i).map((l) => `      ${l}`);
  return [`    line ${i + 1}:`, ...context, `    - ${la[i] ?? '(end of file)'}`, `    + ${lb[i] ?? '(end of file)'}`].join('\n');
}

/** Compares one case's outputs; returns [allowed, problems]. */
function compareCase(name, a, b) {
  const allowed = [];
  const problems = [];
  const fa = files(a);
  const fb = files(b);
  for (const f of fa.filter((x) => !fb.includes(x))) problems.push(`${name}: ${f} is written by cdktf only`);
  for (const f of fb.filter((x) => !fa.includes(x))) problems.push(`${name}: ${f} is written by cdktn only`);
  for (const f of fa.filter((x) => fb.includes(x))) {
    const ta = fs.readFileSync(path.join(a, f), 'utf8');
    const tb = fs.readFileSync(path.join(b, f), 'utf8');
    if (ta === tb) continue;
    const rules = ALLOWED.filter((r) => r.file.test(f));
    if (rules.length === 0) {
      problems.push(`${name}: ${f} differs\n${firstDifference(ta, tb)}`);
      continue;
    }
    const ja = JSON.parse(ta);
    const jb = JSON.parse(tb);
    const values = rules.map((r) => [getAt(ja, r.path), getAt(jb, r.path)]);
    const seen = rules.map((r, i) => `${r.path.join('.')}: ${JSON.stringify(values[i][0])} (cdktf) / ${JSON.stringify(values[i][1])} (cdktn)`);
    rules.forEach((r) => (deleteAt(ja, r.path), deleteAt(jb, r.path)));
    // Rule 2 on both texts, then rule 1 line by line: cdktf's text with the allowed value swapped in
    // where that makes the line cdktn's. What still differs is a problem; so is any difference of value.
    const na = ta.replace(EMPTY_ON_TWO_LINES, '$1$2');
    const nb = tb.replace(EMPTY_ON_TWO_LINES, '$1$2');
    const layout = [ta.match(EMPTY_ON_TWO_LINES)?.length ?? 0, tb.match(EMPTY_ON_TWO_LINES)?.length ?? 0];
    if (layout[0] !== layout[1]) seen.push(`empty arrays/objects on two lines: ${layout[0]} (cdktf) / ${layout[1]} (cdktn)`);
    const lb = nb.split('\n');
    const swapped = (l) => values.reduce((x, [va, vb]) => (typeof va === 'string' ? x.replace(JSON.stringify(va), JSON.stringify(vb)) : x), l);
    const mapped = na
      .split('\n')
      .map((l, i) => (l !== lb[i] && swapped(l) === lb[i] ? lb[i] : l))
      .join('\n');
    if (mapped === nb && JSON.stringify(ja) === JSON.stringify(jb)) allowed.push(`${name}: ${f}: ${seen.join('; ')}`);
    else problems.push(`${name}: ${f} differs beyond the framework metadata\n${firstDifference(mapped, nb)}`);
  }
  return { allowed, problems, count: fa.length };
}

async function main() {
  if (process.argv[2] === '--synth-cases') return synthCases(process.argv[3], process.argv[4]);
  const keep = process.argv.includes('--keep');
  const mutate = process.argv.includes('--mutate-cdktn');
  const t0 = Date.now();
  const bindings = await require('./cdktn-bindings').ensureBindings();
  const bindingsTime = secs(t0);
  log(`bindings: vault ${bindings.providerVersion} for cdktn ${bindings.cdktnVersion} (${bindings.modules.join(', ')}) ready in ${bindingsTime}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-frameworks-'));
  try {
    const versions = {};
    const t1 = Date.now();
    const roots = { cdktf: path.join(tmp, 'cdktf'), cdktn: path.join(tmp, 'cdktn') };
    versions.cdktf = build('cdktf', roots.cdktf, bindings, false);
    // The mutated build is never cached: it is the comparison's self-test.
    if (mutate) versions.cdktn = build('cdktn', roots.cdktn, bindings, true);
    else ({ dir: roots.cdktn, version: versions.cdktn } = cachedCdktnBuild(bindings));
    const compileTime = secs(t1);
    const t2 = Date.now();
    for (const fw of FRAMEWORKS) {
      const t = Date.now();
      execFileSync(process.execPath, [__filename, '--synth-cases', roots[fw], path.join(tmp, 'out', fw)], { stdio: ['ignore', 'inherit', 'inherit'] });
      log(`${fw}: synthesized ${CASES.length} cases (${CASES.join(', ')}) in ${secs(t)}`);
    }
    const synthTime = secs(t2);
    const allowed = [];
    const problems = [];
    let count = 0;
    for (const c of CASES) {
      const r = compareCase(c, path.join(tmp, 'out', 'cdktf', c, 'cdktf.out'), path.join(tmp, 'out', 'cdktn', c, 'cdktf.out'));
      allowed.push(...r.allowed);
      problems.push(...r.problems);
      count += r.count;
    }
    log(`compared ${count} files of ${CASES.length} cases: cdktf ${versions.cdktf} + @cdktf/provider-vault (prebuilt) vs cdktn ${versions.cdktn} + bindings generated from provider ${bindings.providerVersion}`);
    log(`allowed differences (${allowed.length} files: the framework version in its metadata, the layout of empty arrays and objects):`);
    allowed.forEach((a) => log(`  ${a}`));
    log(`times: bindings ${bindingsTime}, compile ${compileTime} (both), synthesis ${synthTime} (both), total ${secs(t0)}`);
    if (problems.length > 0) {
      console.error(`[frameworks] FAILED: ${problems.length} difference(s) beyond the framework metadata:`);
      problems.forEach((p) => console.error(`  ${p}`));
      process.exitCode = 1;
    } else log('the outputs are the same on both frameworks (apart from the allowed differences above)');
  } finally {
    if (keep) log(`kept ${tmp}`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
}

module.exports = { build, cachedCdktnBuild };

if (require.main === module) {
  main().catch((e) => {
    console.error(`[frameworks] ERROR: ${e.stack || e.message}`);
    process.exit(1);
  });
}
