import { AccessChangeRecord, canonicalDigest, canonicalJson, parseAccessChangeRecord } from '../access/access-change-record';
import { mdCode, mdTable } from '../render/markdown-text';
import { GitLabMergeRequest, GitLabNote, GitLabUser } from './gitlab-api';

/** The format name of an {@link ApprovalRecord}. */
export const APPROVAL_RECORD_FORMAT = 'secretstore-iac/approval-record/1';

/**
 * What a merge request's review approved, as its pipeline computed it (docs/pipelines.md §13): the
 * canonical access change of its saved plans, the merge request, its head commit and the target
 * commit the plans were computed against. Embedded in the note the pipeline posts with its own
 * token ({@link renderApprovalSection}) and read back by the default branch through the API
 * ({@link approvedRecordOf}), which checks the note's author.
 */
export interface ApprovalRecord {
  readonly format: typeof APPROVAL_RECORD_FORMAT;
  /** `CI_MERGE_REQUEST_IID`. */
  readonly mergeRequest: number;
  /** The commit reviewed (`CI_COMMIT_SHA` of the merge request's pipeline). */
  readonly headCommit: string;
  /** The target commit the plans were computed against (`CI_MERGE_REQUEST_DIFF_BASE_SHA`). */
  readonly targetCommit: string;
  /** The access change approved. */
  readonly change: AccessChangeRecord;
}

/** The marker of the record in a note: an HTML comment (GitLab shows none of it). */
const MARKER = 'secretstore-iac:approval-record';
const SECTION_TITLE = '### Approval record';
const COMMENT = new RegExp(`<!-- ${MARKER} sha256=([0-9a-f]{64}) ([A-Za-z0-9+/=]*) -->`, 'g');

/** SHA-256 (hex) of a record's canonical JSON: what the note names and the default branch checks. */
export function approvalRecordDigest(record: ApprovalRecord): string {
  return canonicalDigest(record);
}

/**
 * The visible part of the record: one row per identity and path pattern (capabilities gained and
 * lost), per binding, per object, so that what the reviewers read is the record itself (the reader
 * checks that the note shows exactly this text above the record).
 */
export function renderApprovalSummary(record: ApprovalRecord): string {
  const c = record.change;
  const caps = (xs: readonly string[]) => (xs.length === 0 ? '' : xs.map(mdCode).join(' '));
  const rows: string[][] = [];
  for (const i of c.identities) {
    for (const r of i.rules) rows.push([mdCode(i.identity), i.change, mdCode(r.path), caps(r.gained), caps(r.lost)]);
    for (const b of i.bindings) rows.push([mdCode(i.identity), i.change, `binding ${mdCode(b.field)}`, b.after === null ? '' : mdCode(canonicalJson(b.after)), b.before === null ? '' : mdCode(canonicalJson(b.before))]);
  }
  const lines = [
    SECTION_TITLE,
    '',
    `Merge request !${record.mergeRequest}, head ${mdCode(record.headCommit)}, computed against the target commit ${mdCode(record.targetCommit)}; SHA-256 of the record ${mdCode(approvalRecordDigest(record))}. The default branch applies this change automatically only if its own plans give exactly this (docs/pipelines.md §13).`,
    '',
    rows.length === 0 ? 'No access change.' : mdTable(['identity', 'change', 'path or binding', 'gained (binding: after)', 'lost (binding: before)'], rows),
    '',
    c.objects.length === 0 ? 'No object changed.' : `Objects: ${c.objects.map((o) => `${o.action} ${mdCode(`${o.stack}: ${o.address}`)}`).join(', ')}.`,
    '',
    `Plans: ${c.plans.length === 0 ? 'none' : c.plans.map((p) => `${mdCode(p.stack)} ${mdCode(p.sha256)}`).join(', ')}${c.complete ? '' : ' (incomplete: a value unknown until apply, or a change the review cannot read)'}.`,
  ];
  return `${lines.join('\n')}\n`;
}

/** The section of the note holding the record: its summary, then the canonical JSON (base64) and its SHA-256 in an HTML comment. */
export function renderApprovalSection(record: ApprovalRecord): string {
  const json = canonicalJson(record);
  return `${renderApprovalSummary(record)}\n<!-- ${MARKER} sha256=${approvalRecordDigest(record)} ${Buffer.from(json, 'utf8').toString('base64')} -->\n`;
}

/** A record read from a note, or why the note is not one. */
export type ReadApprovalRecord = { readonly record: ApprovalRecord } | { readonly problem: string };

/**
 * Reads the record of a note body: exactly one record comment, base64 of canonical JSON (the same
 * text re-serialized), whose SHA-256 is the one the comment names, of this format, with the note
 * showing its summary ({@link renderApprovalSummary}) right above it.
 */
export function readApprovalSection(body: string): ReadApprovalRecord {
  const found = [...body.matchAll(COMMENT)];
  if (found.length === 0) return { problem: 'no approval record in it' };
  if (found.length > 1) return { problem: `${found.length} approval records in it (one note holds one)` };
  const [, digest, base64] = found[0];
  const text = Buffer.from(base64, 'base64').toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'its record is not JSON' };
  }
  if (canonicalJson(value) !== text) return { problem: 'its record is not in canonical form (sorted keys, no spaces)' };
  if (canonicalDigest(value) !== digest) return { problem: `its record's SHA-256 is ${canonicalDigest(value)}, not the ${digest} the note names` };
  const r = value as ApprovalRecord;
  if (r?.format !== APPROVAL_RECORD_FORMAT || !Number.isInteger(r.mergeRequest) || typeof r.headCommit !== 'string' || typeof r.targetCommit !== 'string') {
    return { problem: `its record is not an approval record of this version (${APPROVAL_RECORD_FORMAT}: mergeRequest, headCommit, targetCommit, change)` };
  }
  try {
    parseAccessChangeRecord(r.change, 'its record');
  } catch (e) {
    return { problem: (e as Error).message };
  }
  const summary = renderApprovalSummary(r);
  const at = found[0].index ?? 0;
  if (!body.slice(0, at).endsWith(`${summary}\n`)) return { problem: 'the note does not show the record it holds (its summary above the record differs)' };
  return { record: r };
}

/** The record a merged merge request's notes hold, or why none is trusted, with each note refused. */
export interface ApprovedRecord {
  /** The record of the latest note of the pipeline's user for the merged head, if any. */
  readonly record?: ApprovalRecord;
  /** The note it was read from. */
  readonly noteId?: number;
  /** Each note holding a record that was not trusted, and why. */
  readonly refused: readonly string[];
}

/**
 * The approval record of merge request `mr`: among its notes that hold one, only those written by
 * `pipelineUser` (the token's own user, `GET /user`: the user that posts the pipeline's notes) whose
 * record is intact ({@link readApprovalSection}), of this merge request and of the head commit that
 * was merged (`mr.sha`); the latest of them. Every other note holding a record is named with why it
 * is refused (another author, an edited record, another head).
 */
export function approvedRecordOf(notes: readonly GitLabNote[], pipelineUser: GitLabUser, mr: GitLabMergeRequest): ApprovedRecord {
  let found: { record: ApprovalRecord; noteId: number } | undefined;
  const refused: string[] = [];
  for (const note of notes) {
    if (note.system || !note.body.includes(MARKER)) continue;
    const who = `note ${note.id} by @${note.author.username}`;
    if (note.author.id !== pipelineUser.id) {
      refused.push(`${who}: not written by the pipeline's user @${pipelineUser.username} (id ${pipelineUser.id}), whose token posts the notes`);
      continue;
    }
    const read = readApprovalSection(note.body);
    if ('problem' in read) {
      refused.push(`${who}: ${read.problem}`);
      continue;
    }
    if (read.record.mergeRequest !== mr.iid) {
      refused.push(`${who}: its record is of !${read.record.mergeRequest}, not !${mr.iid}`);
      continue;
    }
    if (read.record.headCommit !== mr.sha) {
      refused.push(`${who}: its record is of the head ${read.record.headCommit.slice(0, 12)}, not the merged head ${mr.sha.slice(0, 12)} (a later push was not reviewed by it)`);
      continue;
    }
    found = { record: read.record, noteId: note.id };
  }
  return found === undefined ? { refused } : { ...found, refused };
}

/** The approval record of a merge request's review. */
export function approvalRecordOf(change: AccessChangeRecord, mergeRequest: number, headCommit: string, targetCommit: string): ApprovalRecord {
  return { format: APPROVAL_RECORD_FORMAT, mergeRequest, headCommit, targetCommit, change };
}
