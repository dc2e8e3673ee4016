/**
 * Whether a process runs (signal 0: ESRCH means it does not; EPERM means it runs as someone else).
 * A reused pid reads as running: a leftover is then kept, never one in use removed. Used by every
 * cleanup of what killed runs left (adopt's files and check directories, the guards' directories).
 */
export function processRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
