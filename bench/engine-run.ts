/**
 * One timed run of the engine (OpenTofu) for the store benchmark: wall time and the peak resident
 * memory of the engine and its provider plugin together (the process tree, sampled from /proc).
 */
import { spawn } from 'child_process';
import * as fs from 'fs';

/** What one engine run cost. */
export interface EngineRun {
  /** Wall time in milliseconds. */
  readonly ms: number;
  /** Highest sum of the resident memory of the engine and its children (the provider), in MB. */
  readonly peakRssMb: number;
  /** Standard output (the engine prints no secret: the stacks hold none). */
  readonly stdout: string;
}

/** Every process below `root` (its children, their children, ...), from /proc. */
function processTree(root: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name is in parentheses and may hold spaces: the parent pid follows the last ")".
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended while we looked
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(parents.get(tree[i]) ?? []));
  return tree;
}

function rssKb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * Runs `engine args` in `cwd`, sampling the tree's memory every 100 ms.
 * @throws when the engine exits non-zero (with its last output lines)
 */
export function runEngine(engine: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<EngineRun> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(engine, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    let peakKb = 0;
    const sample = () => {
      if (child.pid) peakKb = Math.max(peakKb, processTree(child.pid).reduce((sum, pid) => sum + rssKb(pid), 0));
    };
    const timer = setInterval(sample, 100);
    child.on('error', (error) => {
      clearInterval(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearInterval(timer);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (code !== 0) {
        const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-20).join('\n');
        reject(new Error(`${engine} ${args.join(' ')} in ${cwd} failed (exit ${code}):\n${tail}`));
        return;
      }
      resolve({ ms, peakRssMb: peakKb / 1024, stdout });
    });
  });
}
