import { mdCell, mdCode, mdTable } from '../render/markdown-text';
import { DeclaredObjectKind } from './declared-object';
import { RetiredStackGrants } from './retired-stack-grants';
import { StackMoves } from './stack-moves';

/** What removing each kind of object revokes, for the reviewer. */
const REVOKES: Readonly<Record<DeclaredObjectKind, string>> = {
  'auth-mount': 'auth method: every role under it, every login through it',
  'jwt-auth-mount': 'JWT/OIDC auth method: every role under it, every login through it',
  'jwt-role': 'JWT/OIDC role: every login with it (CI jobs or people)',
  'approle-role': 'AppRole role: its Role ID and every Secret ID issued for it',
  policy: 'policy: what it grants to every token holding it',
};

/**
 * The moves, renames and removals from BASE to HEAD as Markdown for a merge request's note: the
 * removals first (what access is revoked, and that only an approved apply destroys them), then the
 * retired stacks' own pipeline grants (destroyed without approval, and why), then the objects kept
 * through moves and renames, and what the pipeline roles lose once the retired stacks' removal is
 * applied (the release of what moves' override kept: an access change no saved plan of this
 * pipeline shows). Empty when nothing moved, was renamed or removed.
 * @param approval how a removal is applied, one sentence (the pipeline names its manual job)
 * @param kept what each stack's override keeps until that removal ({@link RetiredStackGrants})
 */
export function renderStackMovesMarkdown(result: StackMoves, approval: string, kept: readonly RetiredStackGrants[] = []): string {
  const lines: string[] = [];
  if (result.removals.length > 0) {
    const gone = [...new Set(result.removals.filter((r) => !r.stackRemains).map((r) => r.stack))];
    lines.push(
      `### Objects removed: ${result.removals.length} destroyed on the store, after approval`,
      '',
      `This change declares them nowhere any more; their access is revoked when they are destroyed. ${approval}`,
      ...(gone.length > 0 ? ['', `Removed stacks (every object of their state is destroyed): ${gone.map(mdCode).join(', ')}.`] : []),
      '',
      mdTable(
        ['stack', 'store object', 'what is revoked'],
        result.removals.map((r) => [`${mdCode(r.stack)}${r.stackRemains ? '' : ' (removed)'}`, mdCode(r.storePath), REVOKES[r.kind]].map(mdCell)),
      ),
    );
  }
  const reassigned = result.reassigned ?? [];
  if (reassigned.length > 0) {
    if (lines.length > 0) lines.push('');
    const what = (side: { stack: string; address: string; grant: boolean }) => `${side.grant ? 'pipeline grant' : 'not a pipeline grant'}: ${mdCode(side.address)} in ${mdCode(side.stack)}`;
    lines.push(
      `### Not moved: ${reassigned.length} removed and created again`,
      '',
      'A configuration pipeline role\'s grant on one side and another object on the other: a grant never becomes another object\'s policy, nor the other way round. The object of BASE is among the removals above (destroyed after approval), the one of HEAD is created.',
      '',
      mdTable(
        ['store object', 'in BASE (removed)', 'in HEAD (created)'],
        reassigned.map((r) => [mdCode(r.storePath), what(r.from), what(r.to)].map(mdCell)),
      ),
    );
  }
  const grants = result.retiredGrants ?? [];
  if (grants.length > 0) {
    if (lines.length > 0) lines.push('');
    lines.push(
      `### Pipeline grants of retired stacks: ${grants.length} destroyed automatically, without approval`,
      '',
      'The configuration pipeline roles\' own grant policies in the stacks this change retires, whose every other object moved to another stack (whose grants cover it). They are pipeline-internal and give no identity access to a secret: not a revocation, so the retired stack\'s apply destroys them, with no manual job.',
      '',
      mdTable(
        ['stack', 'store object', 'what it was'],
        grants.map((r) => [`${mdCode(r.stack)} (removed)`, mdCode(r.storePath), 'pipeline grant: the pipeline roles\' rules on this stack\'s objects'].map(mdCell)),
      ),
    );
  }
  const released = kept.flatMap((g) => (g.released ?? []).map((r) => ({ stack: g.stack, ...r })));
  if (released.length > 0) {
    if (lines.length > 0) lines.push('');
    lines.push(
      `### Access released after the retired stacks' removal: ${released.length} change${released.length === 1 ? '' : 's'}`,
      '',
      'Until the removal of the retired stacks is applied, the pipeline roles keep their grants on them (so that removal can be applied). Then the pipeline plans these stacks again as declared and applies that plan with `tf --released-grants`, which takes away exactly this and nothing else (the saved plans above do not show it):',
      '',
      mdTable(
        ['stack', 'role or policy', 'loses'],
        released.map((r) => [mdCode(r.stack), `${r.loses === 'policy' ? 'role' : 'policy'} ${mdCode(r.name)}`, `${r.loses} ${mdCode(r.what)}`].map(mdCell)),
      ),
    );
  }
  const keptObjects = [
    ...result.moves.map((m) => [mdCode(m.storePath), `moved: ${mdCode(m.from.stack)} → ${mdCode(m.to.stack)} (forgotten there, imported here)`]),
    ...result.renames.map((r) => [mdCode(r.storePath), `renamed in ${mdCode(r.stack)}: ${mdCode(r.from)} → ${mdCode(r.to)} (moved in the state)`]),
  ];
  if (keptObjects.length > 0) {
    if (lines.length > 0) lines.push('');
    lines.push(`### Objects kept through moves and renames: ${keptObjects.length}`, '', 'Nothing on the store changes for them: no Role ID or Secret ID changes.', '', mdTable(['store object', 'how'], keptObjects.map((row) => row.map(mdCell))));
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
