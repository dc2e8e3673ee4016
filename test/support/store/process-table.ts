/**
 * The machine's process table as the store tests read it (`/proc`): which processes a test left behind.
 */
import * as fs from 'node:fs';

/**
 * Pids of the processes for which `matches` holds, this test process excluded. `matches` reads
 * `/proc/<pid>/...`; a process that ends while it is read (or is not ours to read) does not match.
 */
export function pidsWhere(matches: (pid: number) => boolean): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      if (pid === process.pid) return false;
      try {
        return matches(pid);
      } catch {
        return false;
      }
    });
}
