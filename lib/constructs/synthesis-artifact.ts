import { IConstruct } from 'constructs';

/** A file written next to the stacks at synthesis (CI templates, agent configurations). */
export interface SynthesisArtifact {
  /** Path relative to the output directory, `/`-separated, without `..` (`ci/registry-ci.gitlab-ci.yml`). */
  readonly path: string;
  /** File content; must be deterministic and must never hold a secret value. */
  readonly content: string;
  /**
   * File mode.
   * @default 0o644
   */
  readonly mode?: number;
}

/**
 * A construct that contributes files to the synthesized output. {@link SecretStoreApp} collects the
 * artifacts of every such construct after validation and writes them with the stacks, atomically.
 */
export interface IArtifactSource extends IConstruct {
  /** The files to write. Called once per synthesis, after validation passed. */
  artifacts(): SynthesisArtifact[];
  /**
   * Directories (relative to the output directory) this source writes alone, by the field that sets
   * them (`{ outputDirectory: 'agents' }`): no other artifact may lie in them or over them, and they
   * may not overlap the stack directories. Sources that share a directory (`ci/`) declare none.
   */
  exclusiveDirectories?(): Readonly<Record<string, string>>;
}

/** True when the construct contributes artifacts. */
export function isArtifactSource(c: IConstruct): c is IArtifactSource {
  return typeof (c as Partial<IArtifactSource>).artifacts === 'function';
}
