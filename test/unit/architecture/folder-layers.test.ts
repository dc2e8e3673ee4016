import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from '../../support/paths';

// lib/ is layered by folder: each folder has one job and imports only from folders below it, so a
// change to a low folder (model, acl) never needs a higher one (constructs, cli) to be read first.

const LIB = path.join(REPO_ROOT, 'lib');

/** The lib folders each lib folder imports from (type-only imports included: they are design edges too). */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const folder of fs.readdirSync(LIB).filter((f) => fs.statSync(path.join(LIB, f)).isDirectory())) {
    const edges = new Set<string>();
    for (const file of fs.readdirSync(path.join(LIB, folder)).filter((f) => f.endsWith('.ts'))) {
      const text = fs.readFileSync(path.join(LIB, folder, file), 'utf8');
      for (const m of text.matchAll(/from '\.\.\/([a-z-]+)\//g)) if (m[1] !== folder) edges.add(m[1]);
    }
    graph.set(folder, edges);
  }
  return graph;
}

/** One cycle of the graph as `a -> b -> a`, or undefined. */
function findCycle(graph: Map<string, Set<string>>): string | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string, trail: string[]): string | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...trail.slice(trail.indexOf(node)), node].join(' -> ');
    state.set(node, 'open');
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      const cycle = visit(next, [...trail, node]);
      if (cycle) return cycle;
    }
    state.set(node, 'done');
    return undefined;
  };
  for (const node of [...graph.keys()].sort()) {
    const cycle = visit(node, []);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('lib/ folders form a one-way import graph', () => {
  it('has no cycle between folders', () => {
    const graph = folderGraph();
    expect(graph.size).toBeGreaterThan(8);
    expect(findCycle(graph)).toBeUndefined();
  });

  it('finds a cycle when one is there (the check itself works)', () => {
    const graph = new Map([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a'])]]);
    expect(findCycle(graph)).toBe('a -> b -> c -> a');
  });

  it('the low folders import no higher one: private nothing, model only private', () => {
    const graph = folderGraph();
    expect([...(graph.get('private') ?? [])]).toEqual([]);
    expect([...(graph.get('model') ?? [])].sort()).toEqual(['private']);
  });
});

describe('lib/cli/ holds the commands; the engine is driven from lib/engine/', () => {
  it('no file under lib/cli/ starts a process (engine runs and plan guards live in lib/engine/)', () => {
    const cli = path.join(LIB, 'cli');
    const spawning = fs
      .readdirSync(cli)
      .filter((f) => f.endsWith('.ts'))
      .filter((f) => /from 'child_process'/.test(fs.readFileSync(path.join(cli, f), 'utf8')));
    expect(spawning).toEqual([]);
  });
});
