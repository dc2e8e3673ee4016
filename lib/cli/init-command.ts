import * as fs from 'fs';
import * as path from 'path';
import { fileErrorCode, fileErrorText } from '../private/file-error-text';
import { packageRoot } from '../private/package-root';
import { ConfigurationRepositoryFile, renderConfigurationRepository } from '../render/configuration-repository';
import { checkLibrarySpec } from '../render/library-spec';
import { Command } from './command';
import { parseCommandArguments } from './command-arguments';
import { ExitCode } from './exit-code';
import { UsageError } from './usage-error';

/** The package's `stacks/` files, by repository path: the configuration a new repository starts from. */
function packageStackFiles(root: string): Record<string, string> {
  const dir = path.join(root, 'stacks');
  const names = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).sort() : [];
  if (!names.includes('main.ts')) throw new Error(`${dir}: the package has no stacks/main.ts to start a configuration repository from`);
  return Object.fromEntries(names.map((f) => [`stacks/${f}`, fs.readFileSync(path.join(dir, f), 'utf8')]));
}

/**
 * Writes `files` into `target` (new, or an empty directory) so that no file is ever seen
 * half-written: everything is written into a staging directory beside it first, then renamed into
 * place (the staging directory itself when `target` does not exist yet).
 */
function writeRepository(target: string, files: readonly ConfigurationRepositoryFile[]): void {
  const parent = path.dirname(target);
  fs.mkdirSync(parent, { recursive: true });
  const staging = fs.mkdtempSync(path.join(parent, `.${path.basename(target)}.init-`));
  try {
    for (const file of files) {
      const to = path.join(staging, ...file.path.split('/'));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.writeFileSync(to, file.content, { mode: 0o644 });
    }
    // mkdtemp makes the staging directory 0700: the repository gets a directory's usual mode.
    fs.chmodSync(staging, 0o755 & ~process.umask());
    if (!fs.existsSync(target)) fs.renameSync(staging, target);
    else {
      for (const entry of fs.readdirSync(staging)) fs.renameSync(path.join(staging, entry), path.join(target, entry));
      fs.rmdirSync(staging);
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Refuses a DIR `init` cannot write a new repository into, before anything is written: one that
 * exists and is not an empty directory (or cannot be listed), or one below a file or a directory
 * that cannot be written in.
 * @throws UsageError naming DIR, what is wrong and what to do
 */
function checkTargetDirectory(target: string): void {
  const refuse = (why: string) => new UsageError(`${why}; nothing was written`);
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(target);
  } catch (e) {
    if (fileErrorCode(e) === 'ENOTDIR') throw refuse(`${target} cannot be created: a part of its path is a file, not a directory`);
    if (fileErrorCode(e) !== 'ENOENT') throw refuse(`${target} cannot be used: ${fileErrorText(e)}`);
  }
  if (stat !== undefined) {
    if (!stat.isDirectory()) throw refuse(`${target} is not a directory`);
    let present: string[];
    try {
      present = fs.readdirSync(target).sort();
    } catch (e) {
      throw refuse(`${target} cannot be listed (${fileErrorText(e)}): give a new or empty directory you may write in`);
    }
    if (present.length > 0) {
      const shown = present.slice(0, 10).join(', ') + (present.length > 10 ? `, ... (${present.length} entries)` : '');
      throw refuse(`${target} is not empty (${shown}): init writes a new repository into an empty or new directory only`);
    }
  }
  // The nearest directory that exists: the repository (or its staging directory) is created in it.
  let parent = path.dirname(target);
  while (!fs.existsSync(parent) && parent !== path.dirname(parent)) parent = path.dirname(parent);
  try {
    fs.accessSync(parent, fs.constants.W_OK | fs.constants.X_OK);
  } catch (e) {
    throw refuse(`${target} cannot be created: ${parent} cannot be written in (${fileErrorText(e)}): give a new or empty directory you may write in`);
  }
}

/**
 * `secretstore-iac init [DIR] [--package SPEC]`: writes a new configuration repository that depends
 * on this package (see {@link renderConfigurationRepository} for its files).
 */
export const initCommand: Command = {
  name: 'init',
  summary: 'write a new configuration repository that depends on this package',
  usage: [
    'Usage: secretstore-iac init [DIR] [--package SPEC]',
    '',
    'Writes a configuration repository into DIR (default: the current directory), which must not',
    'exist or be empty: package.json (depending on secretstore-iac at SPEC, with the scripts build and',
    'synth, and `npm run pipeline:local`: a pinned gitlab-ci-local by npx), tsconfig.json, cdktf.json, .gitignore,',
    '.gitlab-ci.yml (including the generated pipeline), README.md, and stacks/platform.config.ts and',
    'stacks/main.ts: the configuration and app entry this',
    'package ships. Provider lock files are committed in locks/<stack>/ (`secretstore-iac tf` keeps',
    'them there). Every file is written whole, or none.',
    '',
    '  --package SPEC  the dependency on secretstore-iac, one a runner installs: a version range from',
    '                  a registry (default ^<this version>, npm:@SCOPE/secretstore-iac@^<this version> when this',
    '                  package is published under a scope; npm:@acme/secretstore-iac@^0.2.0 for a scoped',
    '                  package in your registry), a git URL with a tag (git+https://HOST/acme/secretstore-iac.git#v0.2.0)',
    '                  or a tarball URL (https://HOST/.../secretstore-iac-0.2.0.tgz); a local tarball',
    '                  (file:../secretstore-iac-0.2.0.tgz) only to try things locally: a runner cannot install it',
    '                  Refused: plain http: and git:// (except to a loopback host), a URL with credentials (give',
    '                  them in .npmrc: //HOST/:_authToken=${NPM_TOKEN}), a range outside npm\'s semver grammar',
    '',
    'Then: cd DIR && npm install && npm run synth (the README written there says what follows).',
    '',
    'Exit codes: 0 written; 2 usage error: DIR is not empty or cannot be written in, or SPEC is none of these (nothing written);',
    '3 runtime error (nothing written).',
  ].join('\n'),
  async run(args, context) {
    const { values, positionals } = parseCommandArguments(args, { package: { type: 'string' } }, { min: 0, max: 1, names: 'at most one DIR' });
    const root = packageRoot(__dirname);
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; version: string; devDependencies?: Record<string, string> };
    // Published under a team's scope (its own registry), the default names that scope, under the name the configuration imports.
    const ownRange = `^${manifest.version}`;
    const spec = values.package !== undefined ? String(values.package) : manifest.name.startsWith('@') ? `npm:${manifest.name}@${ownRange}` : ownRange;
    const checked = checkLibrarySpec(spec);
    // The refused value is not repeated when it holds credentials: the message may go to a CI log.
    if (checked.kind === undefined) throw new UsageError(`--package ${checked.secret === true ? '(a URL with credentials, not shown)' : JSON.stringify(spec)}: ${checked.problem}; nothing was written`);
    const kind = checked.kind;
    if (positionals[0] === '') throw new UsageError('DIR "" is an empty path: give the directory to write the repository into (or none: the current directory); nothing was written');
    const target = path.resolve(context.cwd, positionals[0] ?? '.');
    checkTargetDirectory(target);
    // The versions this package is compiled and tested with: the new repository compiles its configuration with the same.
    const dev = manifest.devDependencies ?? {};
    if (!dev.typescript || !dev['@types/node'] || !dev['gitlab-ci-local']) {
      throw new Error(`${path.join(root, 'package.json')}: devDependencies name no typescript, @types/node and gitlab-ci-local versions to pin`);
    }
    const files = renderConfigurationRepository({
      directoryName: path.basename(target),
      packageSpec: spec,
      typescriptVersion: dev.typescript,
      typesNodeVersion: dev['@types/node'],
      gitlabCiLocalVersion: dev['gitlab-ci-local'],
      stackFiles: packageStackFiles(root),
    });
    try {
      writeRepository(target, files);
    } catch (e) {
      const code = fileErrorCode(e);
      if (code === undefined) throw e;
      const where = (e as NodeJS.ErrnoException).path;
      const reason = `${target} cannot be written: ${fileErrorText(e)}${where !== undefined && where !== target ? ` (at ${where})` : ''}; nothing was written`;
      // A full disk or a failing device is no fault of DIR; anything else (a file system that refuses
      // new entries, a DIR that changed meanwhile, no permission) is the argument's.
      if (['ENOSPC', 'EDQUOT', 'EIO', 'EMFILE', 'ENFILE'].includes(code)) throw new Error(reason);
      throw new UsageError(`${reason}: give a new or empty directory you may write in`);
    }
    const shown = path.relative(context.cwd, target) || '.';
    context.stdout(`secretstore-iac init: wrote a configuration repository depending on secretstore-iac ${spec} in ${shown}:`);
    for (const file of files) context.stdout(`  ${file.path}`);
    if (kind === 'local-tarball') context.stdout(`note: ${spec} is a local tarball, for trying things on this machine: a runner cannot install it (README.md says what to use instead)`);
    context.stdout(`next: cd ${shown} && npm install && npm run synth (see README.md there)`);
    return ExitCode.ok;
  },
};
