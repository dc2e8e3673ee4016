/** The benchmark's dev store on raft storage (demo/local-dev-store.ts): the `-config` it passes. */
import { raftStorageConfig } from '../../../demo/local-dev-store';

describe('raftStorageConfig', () => {
  const config = raftStorageConfig('/tmp/work "x"/store-raft', 41234, 41235);

  it('keeps the data in raft under the given directory, its path quoted as an HCL string', () => {
    expect(config).toMatch(/^storage "raft" \{\n {2}path {4}= "\/tmp\/work \\"x\\"\/store-raft"\n {2}node_id = "bench"\n\}\n/);
  });

  it('names the dev listener as the API address and a second port for the cluster, without mlock', () => {
    expect(config).toContain('api_addr      = "http://127.0.0.1:41234"\n');
    expect(config).toContain('cluster_addr  = "http://127.0.0.1:41235"\n');
    expect(config).toContain('disable_mlock = true\n');
  });

  it('has no in-memory storage block', () => {
    expect(config).not.toMatch(/storage "inmem/);
    expect(config.match(/^storage /gm)).toHaveLength(1);
  });
});
