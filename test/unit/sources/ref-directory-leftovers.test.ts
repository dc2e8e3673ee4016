import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REF_DIRECTORY, removeRefDirectoryLeftovers, resolveGitCommit, synthesizeGitRef } from '../../../lib/sources/git-ref-synthesis';

// Issue 27: a ref synthesis (access-diff, changed-stacks, moves) works in a temporary directory,
// `secretstore-iac-ref-<pid>-XXXXXX` (a git worktree and the output). A run killed during it
// (SIGKILL, a cancelled CI job) cannot remove it; the next synthesis removes the directories of
// processes that no longer run, and only directories that one made: with the owner file naming the
// pid of the name. One whose name merely looks like one is never touched.

/** A pid no process has (the highest a Linux kernel hands out, plus one). */
const DEAD = 4194305;

describe('temporary directories of ref syntheses killed before they ended', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-refdirs-'));
  const tmp = path.join(root, 'tmp');
  const repo = path.join(root, 'config');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: repo, encoding: 'utf8' }).trim();
  let commit: string;

  /** A leftover as a killed synthesis leaves it: its owner file, and a worktree registered in the repository. */
  const leftover = (name: string, owner: string | undefined) => {
    const dir = path.join(tmp, name);
    fs.mkdirSync(dir);
    if (owner !== undefined) fs.writeFileSync(path.join(dir, REF_DIRECTORY.ownerFile), owner);
    return dir;
  };

  beforeAll(async () => {
    fs.mkdirSync(tmp);
    fs.mkdirSync(repo);
    fs.mkdirSync(path.join(repo, 'node_modules'));
    fs.writeFileSync(path.join(repo, 'cdktf.json'), JSON.stringify({ app: 'mkdir -p "$CDKTF_OUTDIR" && echo synthesized > "$CDKTF_OUTDIR/out"' }));
    fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n');
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-q', '-m', 'configuration');
    commit = (await resolveGitCommit('HEAD', repo))!;
  });

  afterEach(() => {
    for (const name of fs.readdirSync(tmp)) fs.rmSync(path.join(tmp, name), { recursive: true, force: true });
    git('worktree', 'prune');
  });

  afterAll(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('the next synthesis removes the directory a killed one left (and its worktree registration), says so, and removes its own when done', async () => {
    const dead = leftover(`${REF_DIRECTORY.prefix}${DEAD}-AbCdEf`, `${DEAD}\n`);
    git('worktree', 'add', '--detach', path.join(dead, 'worktree'), commit);
    const progress: string[] = [];
    const synthesized = await synthesizeGitRef(commit, repo, (l) => progress.push(l), tmp);
    expect(progress[0]).toBe(`removed ${dead}: a synthesis killed before it ended left it (its process no longer runs)`);
    expect(fs.existsSync(dead)).toBe(false);
    // Its own directory: named after this process, with the owner file; gone after dispose.
    const own = path.dirname(synthesized.outdir);
    expect(path.basename(own)).toMatch(new RegExp(`^${REF_DIRECTORY.prefix}${process.pid}-`));
    expect(fs.readFileSync(path.join(own, REF_DIRECTORY.ownerFile), 'utf8')).toBe(`${process.pid}\n`);
    expect(fs.readFileSync(path.join(synthesized.outdir, 'out'), 'utf8')).toBe('synthesized\n');
    synthesized.dispose();
    expect(fs.readdirSync(tmp)).toEqual([]);
    expect(git('worktree', 'list')).not.toContain(dead);
  });

  it('a directory whose name merely looks like one (no owner file, another pid in it, a file, a link) is never removed, nor one whose process runs', () => {
    const fixture = leftover(`${REF_DIRECTORY.prefix}403-abc123`, undefined);
    fs.writeFileSync(path.join(fixture, 'cdk.tf.json'), '{}');
    const otherPid = leftover(`${REF_DIRECTORY.prefix}${DEAD}-qwerty`, '12345\n');
    fs.writeFileSync(path.join(tmp, `${REF_DIRECTORY.prefix}${DEAD}-file`), '');
    const target = leftover('elsewhere', `${DEAD}\n`);
    fs.symlinkSync(target, path.join(tmp, `${REF_DIRECTORY.prefix}${DEAD}-link`));
    // A pid that reads as running (a run still going, or a reused pid) keeps its directory.
    const dead = leftover(`${REF_DIRECTORY.prefix}${DEAD}-zzzzzz`, `${DEAD}\n`);
    expect(removeRefDirectoryLeftovers(true, tmp, (pid) => pid === DEAD)).toEqual([]);
    expect(fs.existsSync(dead)).toBe(true);
    expect(removeRefDirectoryLeftovers(true, tmp)).toEqual([dead]);
    expect(fs.existsSync(path.join(fixture, 'cdk.tf.json'))).toBe(true);
    expect(fs.existsSync(otherPid)).toBe(true);
    expect(fs.readdirSync(tmp).sort()).toEqual(
      [`${REF_DIRECTORY.prefix}403-abc123`, `${REF_DIRECTORY.prefix}${DEAD}-file`, `${REF_DIRECTORY.prefix}${DEAD}-link`, `${REF_DIRECTORY.prefix}${DEAD}-qwerty`, 'elsewhere'].sort(),
    );
  });

  it('only finds without `remove`', () => {
    const dead = leftover(`${REF_DIRECTORY.prefix}${DEAD}-a1B2c3`, `${DEAD}\n`);
    expect(removeRefDirectoryLeftovers(false, tmp)).toEqual([dead]);
    expect(fs.existsSync(dead)).toBe(true);
  });
});
