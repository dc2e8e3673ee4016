/** The first line of every policy the library renders (lib/render/policy-hcl.ts). */
const LIBRARY_HEADER = /^# Policy ".*", managed by secretstore-iac\. Do not edit in the store\.\n/;

/**
 * The declarations behind each rule of a policy the library rendered (lib/render/policy-hcl.ts):
 * every `path "..." {` block follows one `# <construct path>` comment line per declaration that
 * asked for it (`# ci-access/svc-executor`). Only a policy with the library's header is read so: a
 * hand-written policy's comments are prose, its rules map to nothing and the report names the policy.
 * @returns rule path → the construct paths declaring it, in the policy's order
 */
export function ruleSources(policyText: string): ReadonlyMap<string, readonly string[]> {
  const out = new Map<string, string[]>();
  if (!LIBRARY_HEADER.test(policyText)) return out;
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
