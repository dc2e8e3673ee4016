import { IConstruct } from 'constructs';
import { ValidationProblem } from '../model/validation-problem';
import { IArtifactSource, SynthesisArtifact } from './synthesis-artifact';
import { compareStrings } from '../private/compare-strings';

/** One problem of the output layout, at the construct that causes it. */
export interface ArtifactLayoutProblem {
  /** Path of the artifact source. */
  readonly constructPath: string;
  /** What is wrong. */
  readonly problem: ValidationProblem;
}

/** The rule every output directory and artifact path follows, in words. */
export const ARTIFACT_LAYOUT_RULE =
  'output directories may not overlap each other, the stack directories (stacks/) or anything outside cdktf.out';

/**
 * Top-level names of the output directory that the engine side owns: `stacks/` holds the stacks'
 * working directories, whose files a synthesis carries over (a generated file there would survive
 * every later synthesis, and could shadow the engine's), and `manifest.json` is cdktf's.
 */
const RESERVED_TOP_LEVEL = ['stacks', 'manifest.json'];

const isInside = (inner: string, outer: string): boolean => inner === outer || inner.startsWith(`${outer}/`);

/** Problems of a path relative to the output directory; empty when it stays inside it. */
function pathProblem(field: string, value: unknown): ValidationProblem | undefined {
  if (typeof value !== 'string' || value === '' || value.startsWith('/') || value.includes('\\')) {
    return new ValidationProblem(field, value, `must be a relative path inside the output directory: ${ARTIFACT_LAYOUT_RULE}`);
  }
  if (value.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    return new ValidationProblem(field, value, `must not hold "..", "." or empty segments: ${ARTIFACT_LAYOUT_RULE}`);
  }
  const top = value.split('/')[0];
  if (RESERVED_TOP_LEVEL.includes(top)) {
    return new ValidationProblem(
      field,
      value,
      `lies in ${top === 'stacks' ? 'stacks/, the stacks\' working directories, whose files every later synthesis keeps' : `${top}, which cdktf writes`}: ${ARTIFACT_LAYOUT_RULE}`,
    );
  }
  return undefined;
}

/**
 * Checks where the artifact sources write, before anything is written: paths inside the output
 * directory and outside `stacks/`, no path written twice, no file where another source needs a
 * directory, and no exclusive directory (an agents' `outputDirectory`) shared with another source.
 *
 * @param sources the artifact sources whose own validation passed (others are not rendered)
 * @param render renders a source's artifacts (the synthesis keeps them for writing)
 * @returns the problems, by construct path
 */
export function artifactLayoutProblems(
  sources: readonly IArtifactSource[],
  render: (source: IArtifactSource) => readonly SynthesisArtifact[] = (source) => source.artifacts(),
): ArtifactLayoutProblem[] {
  const problems: ArtifactLayoutProblem[] = [];
  const files: { path: string; source: IConstruct }[] = [];
  for (const source of sources) {
    let artifacts: readonly { path: string }[];
    try {
      artifacts = render(source);
    } catch (error) {
      // A renderer's own refusal (its construct should have reported it) is a problem, not a stack trace.
      const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
      problems.push({ constructPath: source.node.path, problem: new ValidationProblem('artifacts', source.node.id, `cannot be rendered: ${message}`) });
      continue;
    }
    for (const artifact of artifacts) {
      const problem = pathProblem('artifact path', artifact.path);
      if (problem) problems.push({ constructPath: source.node.path, problem });
      else files.push({ path: artifact.path, source });
    }
    for (const [field, directory] of Object.entries(source.exclusiveDirectories?.() ?? {})) {
      const problem = pathProblem(field, directory);
      if (problem) problems.push({ constructPath: source.node.path, problem });
    }
  }
  files.sort((a, b) => compareStrings(a.path, b.path));
  const writer = new Map<string, IConstruct>();
  for (const { path, source } of files) {
    const first = writer.get(path);
    if (first) {
      problems.push({
        constructPath: source.node.path,
        problem: new ValidationProblem('artifact path', path, `is also written by ${first.node.path}: two constructs write one file; ${ARTIFACT_LAYOUT_RULE}`),
      });
    } else writer.set(path, source);
  }
  for (const { path, source } of files) {
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const parent = segments.slice(0, i).join('/');
      const owner = writer.get(parent);
      if (owner) {
        problems.push({
          constructPath: source.node.path,
          problem: new ValidationProblem('artifact path', path, `lies below ${parent}, a file written by ${owner.node.path}: ${ARTIFACT_LAYOUT_RULE}`),
        });
      }
    }
  }
  const exclusive = sources.flatMap((source) =>
    Object.entries(source.exclusiveDirectories?.() ?? {})
      .filter(([field, directory]) => pathProblem(field, directory) === undefined)
      .map(([field, directory]) => ({ field, directory, source })),
  );
  for (const { field, directory, source } of exclusive) {
    const other = files.find((f) => f.source !== source && (isInside(f.path, directory) || isInside(directory, f.path)));
    if (other) {
      problems.push({
        constructPath: source.node.path,
        problem: new ValidationProblem(field, directory, `overlaps ${other.path}, written by ${other.source.node.path}: ${ARTIFACT_LAYOUT_RULE}`),
      });
    }
    const shared = exclusive.find((e) => e.source !== source && (isInside(e.directory, directory) || isInside(directory, e.directory)));
    if (shared) {
      problems.push({
        constructPath: source.node.path,
        problem: new ValidationProblem(field, directory, `overlaps ${shared.directory}, the ${shared.field} of ${shared.source.node.path}: ${ARTIFACT_LAYOUT_RULE}`),
      });
    }
  }
  return problems;
}
