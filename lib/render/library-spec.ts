import { comparatorSetAdmitsAVersion } from './semver-range-bounds';

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

/** Where credentials for a registry, a tarball host or a git host go instead of the URL. */
export const CREDENTIALS_RULE =
  'give them in the repository\'s .npmrc as a variable npm reads from the environment (//HOST/:_authToken=${NPM_TOKEN}, the token a masked CI/CD variable), ' +
  'or for a git host in git\'s credential helper or `git config url."https://gitlab-ci-token:${CI_JOB_TOKEN}@HOST/".insteadOf https://HOST/` in the job: ' +
  'package.json, package-lock.json and README.md are committed, and a URL in them is printed by every install';

/** The longest spec taken: npm's semver refuses a range longer than 256 characters. */
const MAX_SPEC_LENGTH = 256;

// The range grammar of node-semver (the one npm installs with; its README's BNF and regular
// expressions), without the loose forms: what it takes, npm takes. Every part is linear to match.
const NUMBER = '(?:0|[1-9][0-9]*)';
const XR = `(?:[xX*]|${NUMBER})`;
const PRE_PART = `(?:${NUMBER}|[0-9]*[A-Za-z-][0-9A-Za-z-]*)`;
const BUILD_PART = '[0-9A-Za-z-]+';
const QUALIFIER = `(?:-${PRE_PART}(?:\\.${PRE_PART})*)?(?:\\+${BUILD_PART}(?:\\.${BUILD_PART})*)?`;
const PARTIAL = `v?${XR}(?:\\.${XR}(?:\\.${XR}${QUALIFIER})?)?`;
const SIMPLE = new RegExp(`^(?:[<>]=?|=|~|\\^)?${PARTIAL}$`);
const HYPHEN = new RegExp(`^(${PARTIAL}) - (${PARTIAL})$`);

const SCOPED_ALIAS = /^npm:@[a-z0-9][a-z0-9._-]*\/[a-z0-9][a-z0-9._-]*@(.+)$/;
// A git URL as npm takes it, with `#` and a tag (or `#semver:RANGE`): a branch or no ref moves under a runner.
const GIT_URL = /^(?:git\+(?:https?|ssh|file):\/\/|git:\/\/|(?:github|gitlab|bitbucket):)[^\s#]+#(?:semver:)?[^\s#]+$/;
const TARBALL_URL = /^https?:\/\/[^\s#]+\.(?:tgz|tar\.gz)(?:\?[^\s#]*)?$/;
const LOCAL_TARBALL = /^file:[^\s]+\.(?:tgz|tar\.gz)$/;

/** Whether every number of a version part fits the integers npm's semver takes. */
function numbersFit(text: string): boolean {
  return (text.match(/[0-9]+/g) ?? []).every((n) => Number(n) <= Number.MAX_SAFE_INTEGER);
}

/**
 * Whether `range` is a range npm can install as written: comparator sets joined by `||`, each a
 * hyphen range (`1.2.3 - 2.3.4`) or comparators joined by spaces (`>=1.2.3 <2`, `^0.2.0`, `~1.2`,
 * `1.x`), by the grammar of node-semver. npm reads ranges loosely, dropping what it cannot parse:
 * `^0.2.0 - ^0.3.0` (a hyphen range takes plain versions) becomes `>=0.2.0 <0.3.0 >=0.3.0 <0.4.0`,
 * which no version satisfies, and an empty set after `||` becomes any version. Both are refused here,
 * as is a range in the grammar that no version satisfies (`>=0.3.0 <0.2.0`: lib/render/semver-range-bounds.ts).
 */
export function isInstallableRange(range: string): boolean {
  return inRangeGrammar(range) && admitsAVersion(range);
}

/** Whether `range` is written in node-semver's grammar (see {@link isInstallableRange}), whatever it admits. */
function inRangeGrammar(range: string): boolean {
  if (range === '' || range.length > MAX_SPEC_LENGTH || !numbersFit(range)) return false;
  return range.split('||').every((set) => {
    const trimmed = set.replace(/^ +| +$/g, '');
    if (trimmed === '') return false;
    if (HYPHEN.test(trimmed)) return true;
    return trimmed.split(/ +/).every((comparator) => SIMPLE.test(comparator));
  });
}

/** Whether some comparator set of a range in the grammar admits a version npm would install (`>=0.3.0 <0.2.0` admits none). */
function admitsAVersion(range: string): boolean {
  return range.split('||').some((set) => comparatorSetAdmitsAVersion(set.replace(/^ +| +$/g, '')));
}

/** Why a URL of `spec` cannot be written into a repository (and whether it holds a credential), or undefined. */
function urlProblem(spec: string): { readonly problem: string; readonly secret?: boolean } | undefined {
  const match = /^(?:git\+)?([a-z]+):\/\/([^/?#]*)/.exec(spec);
  if (!match) return undefined;
  const [, scheme, authority] = match;
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? undefined : authority.slice(0, at);
  const host = (at < 0 ? authority : authority.slice(at + 1)).replace(/:[0-9]*$/, '').replace(/^\[|\]$/g, '').toLowerCase();
  // `git+ssh://git@host/...` names the ssh user, no credential; a user of an https URL is a token.
  if (userinfo !== undefined && (userinfo.includes(':') || scheme !== 'ssh')) {
    return { secret: true, problem: `the URL carries credentials (${userinfo.includes(':') ? 'a user and a password' : 'a user name or token'} before "@"), which would be written into package.json and README.md: remove them and ${CREDENTIALS_RULE}` };
  }
  // A token in the query (GitLab's `private_token=`, a pre-signed URL's signature) is a credential too.
  const query = /\?([^#]*)/.exec(spec)?.[1] ?? '';
  const secretParameter = query.split('&').map((p) => p.split('=')[0]).find((name) => /token|passw|secret|auth|signature|credential|^sig$|key/i.test(name));
  if (secretParameter !== undefined) {
    return { secret: true, problem: `the URL carries a credential in its query (${secretParameter}=), which would be written into package.json and README.md: remove it and ${CREDENTIALS_RULE}` };
  }
  // Plain http: and git:// let anyone on the way change what a runner installs and runs; on this
  // machine's loopback there is no way between (the tool's own install tests serve it so).
  const plain = scheme === 'http' || scheme === 'git';
  const loopback = host === 'localhost' || host === '::1' || /^127(?:\.[0-9]{1,3}){3}$/.test(host);
  if (plain && !loopback) {
    return { problem: `${scheme === 'http' ? 'plain http:' : 'git://'} is not encrypted or authenticated: anyone on the way to ${host} could change the package every runner installs and runs; use https: (git+https:// for git)` };
  }
  return undefined;
}

/** The kind of a spec, or the reason it is refused. */
export type LibrarySpecCheck =
  | { readonly kind: LibrarySpecKind; readonly problem?: undefined }
  | {
      readonly kind?: undefined;
      readonly problem: string;
      /** True when the spec carries a credential: a message must not repeat it. */
      readonly secret?: boolean;
    };

/**
 * Checks `spec` as the dependency on `secretstore-iac`: one of the forms {@link LIBRARY_SPEC_RULE}
 * names (not a dist-tag such as `latest`, a directory or a git URL without a tag; a range by npm's
 * grammar), over https: (plain `http:` and `git://` only to this machine's loopback), with no
 * credentials in a URL.
 */
export function checkLibrarySpec(spec: string): LibrarySpecCheck {
  if (spec !== spec.trim() || /[\r\n]/.test(spec) || spec === '') return { problem: LIBRARY_SPEC_RULE };
  if (spec.length > MAX_SPEC_LENGTH) return { problem: `${LIBRARY_SPEC_RULE}; and at most ${MAX_SPEC_LENGTH} characters` };
  const alias = SCOPED_ALIAS.exec(spec);
  const range = alias ? alias[1] : spec;
  if (isInstallableRange(range)) return { kind: 'registry' };
  if (inRangeGrammar(range)) {
    return {
      problem: `${JSON.stringify(range)} is a version range no version satisfies (each comparator set's bounds exclude each other, e.g. >=0.3.0 <0.2.0, or >1.2.3 <1.2.4 where only a prerelease would fit): npm would install nothing; write the range you mean, e.g. ^0.2.0 or >=0.2.0 <0.4.0; ${LIBRARY_SPEC_RULE}`,
    };
  }
  if (alias || /^[<>=~^vxX*0-9|]/.test(spec)) {
    return {
      problem:
        `${JSON.stringify(range)} is not a version range npm can install: it is outside npm's semver grammar, whose reader drops what it cannot parse ` +
        '(^0.2.0 - ^0.3.0 is read as >=0.2.0 <0.3.0 >=0.3.0 <0.4.0, which no version satisfies); write ^0.2.0, ~0.2.1, >=0.2.0 <0.4.0, 0.2.0 - 0.3.4 ' +
        `(a hyphen range takes plain versions, not ^ or ~), or ranges joined by ||; ${LIBRARY_SPEC_RULE}`,
    };
  }
  const url = urlProblem(spec);
  if (url !== undefined) return url;
  if (GIT_URL.test(spec)) return { kind: 'git' };
  if (TARBALL_URL.test(spec)) return { kind: 'tarball-url' };
  if (LOCAL_TARBALL.test(spec)) return { kind: 'local-tarball' };
  return { problem: LIBRARY_SPEC_RULE };
}

/**
 * The kind of `spec` as a dependency on `secretstore-iac`, or undefined when {@link checkLibrarySpec}
 * refuses it.
 */
export function librarySpecKind(spec: string): LibrarySpecKind | undefined {
  return checkLibrarySpec(spec).kind;
}
