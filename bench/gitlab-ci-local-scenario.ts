/**
 * A cold pipeline under gitlab-ci-local (merge request and default branch, adding one application).
 */
export async function measureColdPipeline(_size: number, _shards: number, _storeBinary: string, _tools: Record<string, string>): Promise<void> {
  throw new Error('--gitlab-ci-local: not implemented yet');
}
