import * as fs from 'node:fs';
import * as path from 'node:path';
import { AuditWindow, auditTime } from '../usage/audit-log-reader';
import { UsageError } from './usage-error';

/** The help lines of the window options, shared by `usage` and `access-diff --usage-log`. */
export const AUDIT_WINDOW_HELP = [
  '  --since TIME        only requests at or after TIME: 2026-11-01, 2026-11-01T12:00:00Z, or 90d, 12h, 30m ago',
  '  --until TIME        only requests before TIME (same forms)',
];

/** The `parseCommandArguments` options of the window. */
export const AUDIT_WINDOW_OPTIONS = { since: { type: 'string' }, until: { type: 'string' } } as const;

/**
 * The window `--since` and `--until` ask for, relative durations counted back from `nowMs`.
 * @throws UsageError for a bound that is not a time, or a window that ends before it starts
 */
export function auditWindowOption(values: { readonly since?: unknown; readonly until?: unknown }, nowMs: number): AuditWindow {
  const bound = (name: 'since' | 'until'): number | undefined => {
    const value = values[name];
    if (typeof value !== 'string') return undefined;
    const ms = auditTime(value, nowMs);
    if (ms === undefined) throw new UsageError(`--${name} ${value}: not a time; use a date (2026-11-01), a time (2026-11-01T12:00:00Z) or a duration before now (90d, 12h, 30m)`);
    return ms;
  };
  const sinceMs = bound('since');
  const untilMs = bound('until');
  if (sinceMs !== undefined && untilMs !== undefined && sinceMs >= untilMs) throw new UsageError('--since must be before --until');
  return { sinceMs, untilMs };
}

/**
 * Audit log files given with `option`, resolved against `cwd`.
 * @throws UsageError naming every file that does not exist
 */
export function auditLogFiles(files: readonly string[], cwd: string, option: string): string[] {
  const resolved = files.map((f) => path.resolve(cwd, f));
  const missing = resolved.filter((f) => !fs.existsSync(f));
  if (missing.length > 0) throw new UsageError(`${option}: no such audit log: ${missing.join(', ')}`);
  return resolved;
}
