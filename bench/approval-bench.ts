/**
 * Approval-comparison benchmark (not a test): prints figures, asserts nothing (issue 46's target: the
 * comparison adds at most 1 s to the default branch's critical path at 5,000 applications).
 *
 * A synthesized access change of 5,000 applications, every one of them changed (three path patterns
 * and two bindings each, and an object), as canonical JSON: what the default branch's review writes
 * (`access-diff --access-change`) when every application changes. Timed, best and median of 7 runs:
 * - reading it back (JSON parse and the format check);
 * - the comparison with two approved records that compose to it (equal: the path every merge takes);
 * - the comparison with the records when every key differs (the mismatch path, before the base
 *   configuration is read);
 * - a note's record of one application rendered and read back (what the default branch reads per merge request).
 *
 * Run: `npm run build`, then `node dist/bench/approval-bench.js [APPLICATIONS]`.
 */
import { performance } from 'perf_hooks';
import { ACCESS_CHANGE_FORMAT, AccessChangeRecord, canonicalJson, parseAccessChangeRecord, RecordedIdentityChange } from '../lib/access/access-change-record';
import { compareWithApprovals } from '../lib/pipeline/approval-comparison';
import { approvalRecordOf, readApprovalSection, renderApprovalSection } from '../lib/pipeline/approval-record';

const APPLICATIONS = Number(process.argv[2] ?? '5000');

function application(i: number, before: string[], after: string[]): RecordedIdentityChange {
  const rule = (path: string) => ({ path, kind: 'prefix', before, after, gained: after.filter((c) => !before.includes(c)), lost: before.filter((c) => !after.includes(c)) });
  return {
    identity: `approle/gen-${i}-bench`,
    method: 'approle',
    change: 'changed',
    rules: [rule(`secret/data/acme/bench/gen-${i}/*`), rule(`secret/metadata/acme/bench/gen-${i}/*`), rule(`kv/data/gen-${i}/config`)],
    bindings: [
      { field: 'secret_id_ttl', before: 3600, after: 7200 },
      { field: 'token_ttl', before: 600, after: 1200 },
    ],
  };
}
const record = (identities: RecordedIdentityChange[]): AccessChangeRecord => ({
  format: ACCESS_CHANGE_FORMAT,
  identities,
  objects: identities.map((i) => ({ stack: `app-roles-${String(Number(i.identity.split('-')[1]) % 16).padStart(2, '0')}`, address: `vault_policy.${i.identity.slice(8)}`, action: 'update' as const })),
  plans: [],
  complete: true,
});

function time(label: string, run: () => unknown): void {
  const ms: number[] = [];
  for (let n = 0; n < 7; n++) {
    const t = performance.now();
    run();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  console.log(`${label}: best ${ms[0].toFixed(1)} ms, median ${ms[3].toFixed(1)} ms`);
}

const ids = [...Array(APPLICATIONS).keys()];
// Applying: every application read → read, list. Approved: !1 read → read, list for the first half, !2 for the rest.
const applying = record(ids.map((i) => application(i, ['read'], ['read', 'list'])));
const text = canonicalJson(applying);
const first = approvalRecordOf(record(ids.filter((i) => i < APPLICATIONS / 2).map((i) => application(i, ['read'], ['read', 'list']))), 1, 'a'.repeat(40), 'b'.repeat(40));
const second = approvalRecordOf(record(ids.filter((i) => i >= APPLICATIONS / 2).map((i) => application(i, ['read'], ['read', 'list']))), 2, 'c'.repeat(40), 'b'.repeat(40));
const other = approvalRecordOf(record(ids.map((i) => application(i, [], ['read']))), 3, 'd'.repeat(40), 'b'.repeat(40));
console.log(`${APPLICATIONS} applications changed: access change ${(text.length / 1e6).toFixed(1)} MB of canonical JSON, ${applying.identities.length * 5} identity keys, ${applying.objects.length} objects`);
time('read back (parse + format check)', () => parseAccessChangeRecord(JSON.parse(text), 'bench'));
let equal = false;
time('comparison, equal (two records composed)', () => (equal = compareWithApprovals(applying, [{ record: first }, { record: second }]).equal));
let differences = 0;
time('comparison, every key different', () => (differences = compareWithApprovals(applying, [{ record: other }]).differences.length));
console.log(`(equal: ${equal}; differences when all differ: ${differences})`);
const one = approvalRecordOf(record([application(0, ['read'], ['read', 'list'])]), 7, 'a'.repeat(40), 'b'.repeat(40));
const section = renderApprovalSection(one);
time('one application\'s note record rendered and read back', () => readApprovalSection(renderApprovalSection(one)));
console.log(`(one application's section: ${section.length} characters)`);
