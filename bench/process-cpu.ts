/**
 * CPU seconds from /proc, for the store benchmark's breakdown of "apply from empty": where the time
 * goes between the engine (OpenTofu and its provider plugins) and the store.
 */
import * as fs from 'fs';

/** Clock ticks a second (USER_HZ): 100 on Linux for every architecture the toolchain builds. */
const TICKS = 100;

/** The fields of `/proc/<pid>/stat` after the command name (which may hold spaces). */
function statFields(pid: number | 'self'): string[] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * CPU seconds (user + system) of the processes this one has waited for, their own waited-for
 * children included (Linux adds a reaped child's time and its children's to the parent's
 * `cutime`/`cstime`): taken before and after a step that spawns the engine, the difference is what
 * every engine and provider process of the step cost.
 */
export function reapedChildrenCpuSeconds(): number {
  const f = statFields('self');
  // Fields 16 and 17 of stat (cutime, cstime) are at 13 and 14 once the pid and the name are cut off.
  return (Number(f[13]) + Number(f[14])) / TICKS;
}

/** CPU seconds (user + system) a running process has used so far (a store server), 0 once it is gone. */
export function processCpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const f = statFields(pid);
    // Fields 14 and 15 of stat (utime, stime).
    return (Number(f[11]) + Number(f[12])) / TICKS;
  } catch {
    return 0;
  }
}
