/**
 * Issue 45, "seals that mean something": `reviewed-plans.json` names each reviewed plan by its
 * SHA-256, and anyone who can edit the file can make it name another plan's. So the file is keyed
 * (HMAC with SECRETSTORE_IAC_REVIEW_SECRET, a protected and masked CI/CD variable, bound to the
 * pipeline and commit), and whatever the file says, the plan applied must have been made from the
 * stack directory's own configuration: read from the plan file itself (its `tfconfig/` snapshot, in a
 * real plan made by Terraform v1.11.4: test/fixtures/saved-plan).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { checkReviewedPlan, checkReviewSeal, planConfigurationProblems, readReviewedPlans, REVIEW_SECRET_VARIABLE, sealReview, UnreviewedPlanRefused } from '../../../lib/engine/reviewed-plan-check';
import { planArchiveEntries, planConfigurationFiles } from '../../../lib/sources/plan-archive';
import { planDigest } from '../../../lib/sources/saved-plan';

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'saved-plan');
const PLAN = fs.readFileSync(path.join(FIXTURE, 'terraform-data.tfplan'));

let dir: string;
let stackDir: string;
let planFile: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-reviewed-'));
  stackDir = path.join(dir, 'stacks', 'ci-access');
  fs.mkdirSync(stackDir, { recursive: true });
  for (const f of ['cdk.tf.json', 'other.tf.json']) fs.copyFileSync(path.join(FIXTURE, f), path.join(stackDir, f));
  planFile = path.join(dir, 'ci-access.tfplan');
  fs.writeFileSync(planFile, PLAN);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const review = (sha256: string) => `${JSON.stringify({ plans: [{ stack: 'ci-access', file: 'secretstore-iac-plans/ci-access.tfplan', sha256 }] })}\n`;
const CI = { CI_PIPELINE_ID: '4711', CI_COMMIT_SHA: 'a'.repeat(40) };
const write = (text: string) => {
  const file = path.join(dir, 'reviewed-plans.json');
  fs.writeFileSync(file, text);
  return file;
};

describe('a saved plan carries the configuration it was made from', () => {
  it('the configuration snapshot of a real plan is read: every file the engine loaded, byte for byte', () => {
    const files = planConfigurationFiles(PLAN);
    expect([...files.keys()].sort()).toEqual(['m-/cdk.tf.json', 'm-/other.tf.json', 'modules.json']);
    expect(files.get('m-/cdk.tf.json')!.equals(fs.readFileSync(path.join(FIXTURE, 'cdk.tf.json')))).toBe(true);
    expect(() => planConfigurationFiles(Buffer.from('not a zip'))).toThrow('not a saved plan: no zip archive');
  });

  it('every entry of a real plan is read by its name (the plan, the state before it, the snapshot); the snapshot is the tfconfig/ ones', () => {
    const entries = planArchiveEntries(PLAN);
    expect([...entries.keys()]).toEqual(expect.arrayContaining(['tfplan', 'tfstate', 'tfconfig/modules.json', 'tfconfig/m-/cdk.tf.json']));
    const snapshot = planConfigurationFiles(PLAN);
    expect([...entries.keys()].filter((n) => n.startsWith('tfconfig/')).map((n) => n.slice('tfconfig/'.length)).sort()).toEqual([...snapshot.keys()].sort());
    expect([...planArchiveEntries(PLAN, (n) => n === 'tfplan').keys()]).toEqual(['tfplan']);
  });

  it('a plan made from the stack directory\'s files passes; one made from another configuration is refused, naming the file', () => {
    expect(planConfigurationProblems(PLAN, stackDir)).toEqual([]);
    fs.writeFileSync(path.join(stackDir, 'cdk.tf.json'), '{"resource":{"terraform_data":{"x":{"input":"b"}}}}\n');
    expect(planConfigurationProblems(PLAN, stackDir)).toEqual(['its cdk.tf.json is not the stack directory\'s (another configuration)']);
    fs.rmSync(path.join(stackDir, 'other.tf.json'));
    expect(planConfigurationProblems(PLAN, stackDir)).toEqual(['its cdk.tf.json is not the stack directory\'s (another configuration)', 'it was made with other.tf.json, which the stack directory does not hold']);
  });
});

describe('reviewed-plans.json pointing at another plan is refused', () => {
  it('without the secret: an edited digest naming another plan carries it through no apply, since that plan was made from another configuration', () => {
    // The other plan: what the review did not read (here: the stack directory holds another configuration than it was made from).
    fs.writeFileSync(path.join(stackDir, 'cdk.tf.json'), '{"resource":{"terraform_data":{"declared":{"input":"a"}}}}\n');
    const file = write(review(planDigest(PLAN)));
    const plans = readReviewedPlans(file);
    expect(checkReviewSeal('ci-access', file, plans, {})).toMatch(/is unverified \(SECRETSTORE_IAC_REVIEW_SECRET is not set/);
    expect(() => checkReviewedPlan('ci-access', planFile, plans, file, undefined, stackDir)).toThrow(UnreviewedPlanRefused);
    expect(() => checkReviewedPlan('ci-access', planFile, plans, file, undefined, stackDir)).toThrow(`${planFile} was not made from this stack's synthesis: its cdk.tf.json is not the stack directory's (another configuration)`);
  });

  it('the plan the review read, made from the stack directory: applied', () => {
    const file = write(review(planDigest(PLAN)));
    expect(() => checkReviewedPlan('ci-access', planFile, readReviewedPlans(file), file, undefined, stackDir)).not.toThrow();
  });

  it('with the secret: the review job\'s seal verifies; an edited digest, a seal with the wrong secret, no seal, another pipeline\'s review are refused', () => {
    const env = { ...CI, [REVIEW_SECRET_VARIABLE]: 'the protected secret' };
    const sealed = sealReview(review(planDigest(PLAN)), env);
    expect(JSON.parse(sealed).seal).toEqual({ hmac: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/), pipeline: '4711', commit: CI.CI_COMMIT_SHA });
    expect(sealed).not.toContain('the protected secret');
    const file = write(sealed);
    expect(checkReviewSeal('ci-access', file, readReviewedPlans(file), env)).toMatch(/its seal verifies \(HMAC-SHA256 with SECRETSTORE_IAC_REVIEW_SECRET, pipeline 4711/);
    // Its digest changed to another plan's, the seal left (or recomputed without the secret: there is none to recompute).
    const edited = write(sealed.replace(planDigest(PLAN), 'b'.repeat(64)));
    expect(() => checkReviewSeal('ci-access', edited, readReviewedPlans(edited), env)).toThrow(/the seal of .* does not verify with SECRETSTORE_IAC_REVIEW_SECRET: the file was edited after the review/);
    const wrong = write(sealReview(review(planDigest(PLAN)), { ...env, [REVIEW_SECRET_VARIABLE]: 'a guessed secret' }));
    expect(() => checkReviewSeal('ci-access', wrong, readReviewedPlans(wrong), env)).toThrow(/does not verify with SECRETSTORE_IAC_REVIEW_SECRET/);
    const unsealed = write(review(planDigest(PLAN)));
    expect(() => checkReviewSeal('ci-access', unsealed, readReviewedPlans(unsealed), env)).toThrow(/carries no seal, and SECRETSTORE_IAC_REVIEW_SECRET is set/);
    const other = write(sealReview(review(planDigest(PLAN)), { ...env, CI_PIPELINE_ID: '4700' }));
    expect(() => checkReviewSeal('ci-access', other, readReviewedPlans(other), env)).toThrow(/is the review of pipeline 4700, this job's CI_PIPELINE_ID is 4711/);
  });

  it('without the secret the review is written as it is (no seal is presented as one)', () => {
    expect(sealReview(review(planDigest(PLAN)), CI)).toBe(review(planDigest(PLAN)));
  });
});
