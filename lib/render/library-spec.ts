/**
 * How a configuration repository depends on `secretstore-iac`: the forms of an npm dependency spec a
 * CI runner can install from a clean checkout, and the local tarball, kept only for trying things on
 * one machine (npm resolves `file:` from the repository, so a runner's checkout cannot install it).
 */
export type LibrarySpecKind = 'registry' | 'git' | 'tarball-url' | 'local-tarball';

/** The rule {@link librarySpecKind} checks, as an error message states it. */
export const LIBRARY_SPEC_RULE = [
  'must be, on one line, a version range from a registry (^0.2.0, or npm:@acme/secretstore-iac@^0.2.0 for a scoped',
  'package in your own registry), a git URL with a tag (git+https://gitlab.example.com/acme/secretstore-iac.git#v0.2.0),',
  'a tarball URL (https://packages.example.com/secretstore-iac-0.2.0.tgz), or, for trying things locally only,',
  'a local tarball (file:../secretstore-iac-0.2.0.tgz: a runner cannot install it)',
].join(' ');

// One comparator of a semver range: `1.2.3`, `^1.2`, `>=1.2.3-rc.1`, `1.x`, `*`.
const COMPARATOR = /^(?:[~^]|[<>]=?|=)?v?(?:\*|\d+(?:\.(?:\d+|[xX*])){0,2}(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$/;
const SCOPED_ALIAS = /^npm:@[a-z0-9][a-z0-9._-]*\/[a-z0-9][a-z0-9._-]*@(.+)$/;
// A git URL as npm takes it, with `#` and a tag (or `#semver:RANGE`): a branch or no ref moves under a runner.
const GIT_URL = /^(?:git\+(?:https|ssh|file):\/\/|git:\/\/|(?:github|gitlab|bitbucket):)[^\s#]+#(?:semver:)?[^\s#]+$/;
const TARBALL_URL = /^https?:\/\/[^\s#]+\.(?:tgz|tar\.gz)(?:\?[^\s#]*)?$/;
const LOCAL_TARBALL = /^file:[^\s]+\.(?:tgz|tar\.gz)$/;

/** Whether `range` is a semver range (comparators joined by spaces, ` - ` and `||`). */
function isRange(range: string): boolean {
  const tokens = range.split(/\s*\|\|\s*|\s+/).filter((t) => t !== '-');
  return tokens.length > 0 && tokens.every((t) => COMPARATOR.test(t));
}

/**
 * The kind of `spec` as a dependency on `secretstore-iac`, or undefined when it is none of the forms
 * {@link LIBRARY_SPEC_RULE} names (a dist-tag such as `latest`, a directory, a git URL without a tag).
 */
export function librarySpecKind(spec: string): LibrarySpecKind | undefined {
  if (spec !== spec.trim() || /[\r\n]/.test(spec) || spec === '') return undefined;
  if (isRange(spec)) return 'registry';
  const alias = SCOPED_ALIAS.exec(spec);
  if (alias) return isRange(alias[1]) ? 'registry' : undefined;
  if (GIT_URL.test(spec)) return 'git';
  if (TARBALL_URL.test(spec)) return 'tarball-url';
  if (LOCAL_TARBALL.test(spec)) return 'local-tarball';
  return undefined;
}
