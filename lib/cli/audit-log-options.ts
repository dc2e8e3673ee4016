import { AuditWindow, auditTime } from '../usage/audit-log-reader';
import { inputFilePath } from './input-file';
import { UsageError } from './usage-error';

/** The help lines of the window options, shared by `usage` and `access-diff --usage-log`. */
export const AUDIT_WINDOW_HELP = [
  '  --since TIME        only requests at or after TIME: 2026-11-01, 2026-11-01T12:00:00Z, or 90d, 12h, 30m ago',
  '  --until TIME        only requests before TIME (same forms)',
];

/** The `parseCommandArguments` options of the window. */
export const AUDIT_WINDOW_OPTIONS = { since: { type: 'string' }, until: { type: 'string' } } as const;

/**
 * The window `--since` and `--until` ask for, relative durations counted back from `nowMs`, which
 * is also the time of the read (an entry dated later is no use made yet).
 * @throws UsageError for a bound that is not a time, or a window that ends before it starts
 */
export function auditWindowOption(values: { readonly since?: unknown; readonly until?: unknown }, nowMs: number): AuditWindow {
  const bound = (name: 'since' | 'until'): number | undefined => {
    const value = values[name];
    if (typeof value !== 'string') return undefined;
    const ms = auditTime(value, nowMs);
    if (ms === undefined) throw new UsageError(`--${name} ${value}: not a time (or one no date can hold); use a date (2026-11-01), a time (2026-11-01T12:00:00Z) or a duration before now (90d, 12h, 30m)`);
    return ms;
  };
  const sinceMs = bound('since');
  const untilMs = bound('until');
  if (sinceMs !== undefined && untilMs !== undefined && sinceMs >= untilMs) throw new UsageError('--since must be before --until');
  return { sinceMs, untilMs, nowMs };
}

/**
 * Audit log files given with `option`, resolved against `cwd`, each checked to be a readable
 * regular file ({@link inputFilePath}).
 * @throws UsageError naming every file that is not one, with what to do
 */
export function auditLogFiles(files: readonly string[], cwd: string, option: string): string[] {
  const problems: string[] = [];
  const resolved = files.map((given) => {
    try {
      return inputFilePath({ option, given, what: "the file audit device's log (sys/audit, type \"file\", options.file_path)" }, cwd);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      problems.push(e.message);
      return given;
    }
  });
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return resolved;
}
