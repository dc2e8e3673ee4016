/**
 * The declarations behind each rule of a policy the library rendered (lib/render/policy-hcl.ts):
 * every `path "..." {` block follows one `# <construct path>` comment line per declaration that
 * asked for it (`# ci-access/svc-executor`). A hand-written policy has none: its rules map to
 * nothing and the report names the policy alone.
 * @returns rule path → the construct paths declaring it, in the policy's order
 */
export function ruleSources(policyText: string): ReadonlyMap<string, readonly string[]> {
  const out = new Map<string, string[]>();
  let comments: string[] = [];
  for (const line of policyText.split('\n')) {
    const comment = /^# (.+)$/.exec(line);
    if (comment) {
      comments.push(comment[1]);
      continue;
    }
    const block = /^path ("(?:[^"\\]|\\.)*") \{$/.exec(line);
    if (block && comments.length > 0) {
      try {
        out.set(JSON.parse(block[1]) as string, comments);
      } catch {
        /* a path this reader cannot decode: named by its policy only */
      }
    }
    comments = [];
  }
  return out;
}
