import { ValidationProblem } from '../model/validation-problem';
import { AccessInvariant } from './access-invariant';
import { IdentitySelector, nameMatches, selects } from './identity-selector';
import { InvariantSubject } from './invariant-subject';

/**
 * Every invariant that speaks of nobody among `subjects`, as problems naming the invariant and the
 * field: a `who` that selects no identity, an `except` entry that takes away none of the identities
 * `who` selects, and an `except` that takes away all of them. An invariant that selects nobody holds
 * trivially and would pass silently whatever the grants, so a misspelt name (`registry-ci` for
 * `jwt/registry-ci`, a wrong case) is refused, with what the names look like.
 */
export function invariantSelectionProblems(subjects: readonly InvariantSubject[], invariants: readonly AccessInvariant[]): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const declared = `${subjects.length} declared ${subjects.length === 1 ? 'identity' : 'identities'}`;
  for (const invariant of invariants) {
    const at = `invariant "${invariant.id}"`;
    const selected = subjects.filter((s) => selects(invariant.who, s.name, s.kind, s.namespace));
    if (selected.length === 0) {
      problems.push(new ValidationProblem(`${at}.who`, invariant.who, `selects none of the ${declared}${hint(invariant.who, subjects)}`));
      continue;
    }
    const except = invariant.except ?? [];
    except.forEach((e, j) => {
      if (!selected.some((s) => selects(e, s.name, s.kind, s.namespace))) {
        problems.push(new ValidationProblem(`${at}.except[${j}]`, e, `takes away none of the ${selected.length} identities "who" selects${hint(e, selected)}`));
      }
    });
    if (except.length > 0 && selected.every((s) => except.some((e) => selects(e, s.name, s.kind, s.namespace)))) {
      problems.push(new ValidationProblem(`${at}.except`, except, `takes away every identity "who" selects (${selected.length}), so the invariant speaks of nobody: narrow "except" or drop the invariant`));
    }
  }
  return problems;
}

/** What a selector that selects nothing may have meant: another namespace, the `<auth mount>/<role>` form, the case, the kind. */
function hint(selector: IdentitySelector, subjects: readonly InvariantSubject[]): string {
  if (subjects.length === 0) return '';
  if (selector.namespace !== undefined) {
    // Selected but in another namespace: say where they are.
    const elsewhere = subjects.filter((s) => selects({ ...selector, namespace: undefined }, s.name, s.kind));
    if (elsewhere.length > 0) {
      const places = [...new Set(elsewhere.map((s) => (s.namespace === undefined ? 'the root namespace ("")' : `"${s.namespace}"`)))].sort();
      return `: the namespace "${selector.namespace}" has none of them; they are in ${places.join(', ')}`;
    }
  }
  const name = selector.name;
  if (name !== undefined) {
    const byRole = subjects.filter((s) => nameMatches(name, s.name.slice(s.name.indexOf('/') + 1)));
    if (!name.includes('/') && byRole.length > 0) return `: names are "<auth mount>/<role>", e.g. "${byRole[0].name}"`;
    const byCase = subjects.filter((s) => nameMatches(name.toLowerCase(), s.name.toLowerCase()));
    if (byCase.length > 0 && !byCase.some((s) => nameMatches(name, s.name))) return `: names are compared exactly, case included ("${byCase[0].name}")`;
    const byName = subjects.filter((s) => nameMatches(name, s.name));
    if (byName.length > 0) return `: "${byName[0].name}" is of kind ${byName[0].kind}, not ${selector.kind}`;
  }
  return `: names are "<auth mount>/<role>", e.g. "${subjects[0].name}"`;
}

/** Invariants that speak of nobody ({@link invariantSelectionProblems}), every one named. */
export class InvariantSelectionError extends Error {
  constructor(readonly problems: readonly ValidationProblem[]) {
    super(`${problems.length} invariant ${problems.length === 1 ? 'problem' : 'problems'}: an invariant must speak of a declared identity:\n${problems.map((p) => `  ${String(p)}`).join('\n')}`);
    this.name = 'InvariantSelectionError';
  }
}

/**
 * Throws when an invariant speaks of nobody among `subjects` ({@link invariantSelectionProblems}).
 * @throws InvariantSelectionError naming every such invariant and field at once
 */
export function assertInvariantsSelect(subjects: readonly InvariantSubject[], invariants: readonly AccessInvariant[]): void {
  const problems = invariantSelectionProblems(subjects, invariants);
  if (problems.length > 0) throw new InvariantSelectionError(problems);
}
