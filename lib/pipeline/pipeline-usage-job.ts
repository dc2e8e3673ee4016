import * as fs from 'fs';
import * as path from 'path';
import { AUDIT_LOG_VARIABLE, NARROWING_FILE, NARROWING_KEEP_VARIABLE, NARROWING_PATCH_FILE, NARROWING_RETIRE_IDLE_VARIABLE, USAGE_FILE, USAGE_MATRIX_FILE, USAGE_SINCE_VARIABLE } from '../render/configuration-pipeline-yaml';
import { PLATFORM_CONFIG_SOURCE } from '../usage/platform-config-source';
import { jobOutdir, PipelineCommandRunner, PipelineJobContext, PipelineJobResult } from './pipeline-job-context';

/** Where the job puts the log files it downloads. */
const DOWNLOADS = 'secretstore-iac-audit-log';

/** Runs `secretstore-iac usage` with the given arguments: its exit code and standard output. */
export type PipelineUsageRunner = PipelineCommandRunner;

/** Runs `secretstore-iac narrow` with the given arguments: its exit code and standard output. */
export type PipelineNarrowRunner = PipelineCommandRunner;

/**
 * A file name for a downloaded log: the URL's last segment (its `.gz` kept, so the reader inflates
 * it), made safe, numbered so two URLs ending alike stay apart.
 */
function downloadName(url: URL, n: number): string {
  const last = decodeURIComponent(url.pathname.split('/').filter(Boolean).pop() ?? 'audit.log').replace(/[^A-Za-z0-9._-]/g, '_');
  return `${n}-${last === '' ? 'audit.log' : last}`;
}

/**
 * The audit log files the variable names, the URLs downloaded into {@link DOWNLOADS}. A URL's
 * query string and credentials are never printed (a signed URL is a secret).
 * @throws Error naming the entry when a URL cannot be downloaded (the job fails, no usage file)
 */
async function auditLogFiles(ctx: PipelineJobContext, entries: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const [i, entry] of entries.entries()) {
    if (!/^https?:\/\//i.test(entry)) {
      files.push(entry);
      continue;
    }
    const url = new URL(entry);
    const shown = `${url.protocol}//${url.host}${url.pathname}`;
    if (url.protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
      throw new Error(`${AUDIT_LOG_VARIABLE}: ${shown}: plain http to another host; give an https:// URL (the log names every identity's requests)`);
    }
    let response: Response;
    try {
      response = await fetch(url);
    } catch (e) {
      throw new Error(`${AUDIT_LOG_VARIABLE}: ${shown}: cannot be downloaded (${(e as Error).message})`);
    }
    if (!response.ok) throw new Error(`${AUDIT_LOG_VARIABLE}: ${shown}: HTTP ${response.status}; check the URL and that the runner may read it`);
    const file = path.join(DOWNLOADS, downloadName(url, i + 1));
    fs.mkdirSync(path.join(ctx.dir, DOWNLOADS), { recursive: true });
    fs.writeFileSync(path.join(ctx.dir, file), Buffer.from(await response.arrayBuffer()));
    ctx.log.decide(`downloaded ${shown} as ${file}`);
    files.push(file);
  }
  return files;
}

/**
 * The usage job (issue 47, docs/usage.md §9): the usage report of the synthesized configuration over
 * the store's audit log that {@link AUDIT_LOG_VARIABLE} names (files on the runner, `https://` URLs),
 * kept as the artifacts {@link USAGE_FILE} (the usage file the merge requests' reviews read) and
 * {@link USAGE_MATRIX_FILE}. Denied requests and failed logins are findings of the report, not a
 * failure of the job; a log that cannot be read is (exit as `usage`'s).
 *
 * Then the narrowing of that report (`narrow`, docs/usage.md §8), as the change a person applies
 * in a merge request: {@link NARROWING_PATCH_FILE} (the edits of `stacks/platform.config.ts`, `git
 * apply`) and {@link NARROWING_FILE} (the merge request's description, with the evidence); the
 * repository's files are not changed. {@link NARROWING_KEEP_VARIABLE} lists the grants kept
 * regardless (`--keep`); {@link NARROWING_RETIRE_IDLE_VARIABLE} `true` retires the applications and people
 * groups whose role never logged in (`--retire-idle`). Without a configuration source the log says so and the job passes; a
 * narrowing that fails (a `--keep` that names nothing) fails the job, the usage file kept.
 */
export async function runUsageJob(ctx: PipelineJobContext, usage: PipelineUsageRunner, narrow?: PipelineNarrowRunner): Promise<PipelineJobResult> {
  const entries = (ctx.env[AUDIT_LOG_VARIABLE] ?? '').split(/\s+/).filter((e) => e !== '');
  for (const f of [USAGE_FILE, USAGE_MATRIX_FILE, NARROWING_FILE, NARROWING_PATCH_FILE]) fs.rmSync(path.join(ctx.dir, f), { force: true });
  if (entries.length === 0) {
    ctx.log.decide(`${AUDIT_LOG_VARIABLE} is not set: no audit log, no usage file (docs/usage.md §9: how to make the store's file audit log available to this job)`);
    return { exitCode: 0, stacks: [] };
  }
  const files = await auditLogFiles(ctx, entries);
  const since = ctx.env[USAGE_SINCE_VARIABLE] ?? '';
  const args = [jobOutdir(ctx), ...files.flatMap((f) => ['--log', f]), ...(since !== '' ? ['--since', since] : []), '--format', 'json', '--matrix', USAGE_MATRIX_FILE];
  ctx.log.decide(`the usage of the configuration over ${files.length === 1 ? '1 audit log file' : `${files.length} audit log files`}${since !== '' ? ` since ${since}` : ''}: ${USAGE_FILE} and ${USAGE_MATRIX_FILE} (artifacts the merge requests' reviews read)`);
  const r = await usage(args);
  if (r.exitCode > 1) {
    ctx.log.decide(`usage failed (exit ${r.exitCode}): no usage file`);
    return { exitCode: r.exitCode, stacks: [] };
  }
  fs.writeFileSync(path.join(ctx.dir, USAGE_FILE), r.stdout.endsWith('\n') ? r.stdout : `${r.stdout}\n`);
  const report = JSON.parse(r.stdout) as { identities: Array<{ used: unknown[]; unused: unknown[]; denied: unknown[] }>; failedLogins: unknown[] };
  const count = (pick: (u: { used: unknown[]; unused: unknown[]; denied: unknown[] }) => unknown[]) => report.identities.reduce((n, u) => n + pick(u).length, 0);
  ctx.log.decide(
    `${report.identities.length} identities: ${count((u) => u.used)} grants used, ${count((u) => u.unused)} never used (least-privilege candidates), ${count((u) => u.denied)} denied requests, ${report.failedLogins.length} failed logins (by mount)`,
  );
  if (narrow === undefined) return { exitCode: 0, stacks: [] };
  if (!fs.existsSync(path.join(ctx.dir, PLATFORM_CONFIG_SOURCE))) {
    ctx.log.decide(`no ${PLATFORM_CONFIG_SOURCE} in the repository: no narrowing (narrow edits the PlatformConfig object there)`);
    return { exitCode: 0, stacks: [] };
  }
  const keep = (ctx.env[NARROWING_KEEP_VARIABLE] ?? '').split(/\s+/).filter((k) => k !== '');
  const retireIdle = (ctx.env[NARROWING_RETIRE_IDLE_VARIABLE] ?? '').trim();
  if (retireIdle !== '' && retireIdle !== 'true' && retireIdle !== 'false') {
    ctx.log.decide(`${NARROWING_RETIRE_IDLE_VARIABLE} is ${JSON.stringify(retireIdle)}: give true (retire the roles that never logged in) or false; no narrowing, ${USAGE_FILE} is kept`);
    return { exitCode: 2, stacks: [] };
  }
  const n = await narrow([
    jobOutdir(ctx), '--usage', USAGE_FILE, '--config', PLATFORM_CONFIG_SOURCE, ...keep.flatMap((k) => ['--keep', k]), ...(retireIdle === 'true' ? ['--retire-idle'] : []),
    '--markdown', NARROWING_FILE, '--patch', NARROWING_PATCH_FILE,
  ]);
  if (n.exitCode !== 0) {
    for (const f of [NARROWING_FILE, NARROWING_PATCH_FILE]) fs.rmSync(path.join(ctx.dir, f), { force: true });
    ctx.log.decide(`narrow failed (exit ${n.exitCode}): no narrowing; ${USAGE_FILE} is kept`);
    return { exitCode: n.exitCode, stacks: [] };
  }
  const patch = fs.readFileSync(path.join(ctx.dir, NARROWING_PATCH_FILE), 'utf8');
  if (patch === '') fs.rmSync(path.join(ctx.dir, NARROWING_PATCH_FILE));
  const changed = patch.split('\n').filter((l) => /^[-+](?![-+]{2} [ab]\/)/.test(l)).length;
  ctx.log.decide(
    patch === ''
      ? `the narrowing edits nothing in ${PLATFORM_CONFIG_SOURCE} (${NARROWING_FILE} lists what no field changes, if anything)`
      : `the narrowing as a change: ${NARROWING_PATCH_FILE} (${changed} changed lines of ${PLATFORM_CONFIG_SOURCE}; \`git apply ${NARROWING_PATCH_FILE}\` in a merge request) and ${NARROWING_FILE} (its description, with the evidence)`,
  );
  return { exitCode: 0, stacks: [] };
}
