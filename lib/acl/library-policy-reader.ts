import { isCapability } from '../model/capability';
import { PolicyDocument } from '../model/policy-document';
import { renderPolicyHcl } from '../render/policy-hcl';

/** Header line the library writes first: `# Policy "<name>", managed by secretstore-iac. ...`. */
const HEADER = /^# Policy "([^"\\]*)"/;
const COMMENT = /^# (.*)$/;
/**
 * Path strings the fast path takes: no quote, backslash, control character or template sequence
 * (`${`, `%{`), the characters whose meaning in a quoted string differs between HCL versions.
 */
const PATH_LINE = /^path "((?:[^"\\$%\x00-\x1f]|[$%](?!\{))*)" \{$/;
const CAPABILITIES_LINE = /^ {2}capabilities = \[((?:"[a-z]+"(?:, "[a-z]+")*)?)\]$/;

/** A rule read by the fast path: the path as written and its capability words. */
export interface LibraryPolicyRule {
  /** Path as written. */
  readonly path: string;
  /** Capability words as written. */
  readonly capabilities: readonly string[];
}

/**
 * Reads a policy text that this library produced (`renderPolicyHcl`, lib/render/policy-hcl.ts), without an HCL parser.
 *
 * The text is accepted only when rendering the rules read from it with the library's own renderer
 * gives back the very same bytes: then it is the library's output and its rules are exactly these.
 * Anything else (a hand edit, a foreign policy, a renderer change) returns undefined, and the caller
 * falls back to the HCL 1 reader (lib/acl/hcl1-syntax.ts), which reads the same text the same way,
 * only slower: this keeps a 1,000-application report fast.
 *
 * @returns the rules in the order written, or undefined when the text is not the library's output
 */
export function readLibraryPolicy(text: string): LibraryPolicyRule[] | undefined {
  const lines = text.split('\n');
  const header = HEADER.exec(lines[0] ?? '');
  if (!header) return undefined;
  const document = new PolicyDocument(header[1]);
  const rules: LibraryPolicyRule[] = [];
  let sources: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const path = PATH_LINE.exec(line);
    if (path) {
      const caps = CAPABILITIES_LINE.exec(lines[i + 1] ?? '');
      if (!caps || lines[i + 2] !== '}' || sources.length === 0) return undefined;
      const words = caps[1] === '' ? [] : caps[1].split(', ').map((w) => w.slice(1, -1));
      if (!words.every(isCapability)) return undefined;
      for (const source of sources) document.addRule(path[1], words.filter(isCapability), source);
      rules.push({ path: path[1], capabilities: words });
      sources = [];
      i += 2;
      continue;
    }
    const comment = COMMENT.exec(line);
    if (comment) sources.push(comment[1]);
    else if (line !== '') return undefined;
  }
  if (rules.length === 0) return undefined;
  return renderPolicyHcl(document) === text ? rules : undefined;
}
