import { mdCell, mdCode, mdTable, mdText } from '../render/markdown-text';
import { RemovedAccessUsage, daysAgo } from './removed-access-use';

/**
 * The access diff's section on the use of what it removes: where the usage was read and its
 * window, then one row per removed or narrowed grant with its last use and the requests the
 * change denies (every value from the log as inline code: a request path is the client's text).
 */
export function removedAccessUseSection(usage: RemovedAccessUsage): string[] {
  const nowMs = Date.parse(usage.now);
  const window = `${usage.window.since !== undefined ? mdCode(usage.window.since) : 'the start of the log'} to ${usage.window.until !== undefined ? mdCode(usage.window.until) : 'the end of the log'}`;
  const seen = usage.seen.first !== undefined ? `; requests seen ${mdCode(usage.seen.first)} to ${mdCode(usage.seen.last ?? usage.seen.first)}` : '; no request in the window';
  const out = ['### Use of the access this change removes', '', `From the ${usage.source.kind === 'audit-log' ? 'audit log' : 'usage file'} ${usage.source.files.map(mdCode).join(', ')}: window ${window}${seen}.`, ''];
  if (usage.future.length > 0) {
    const shown = usage.future.slice(0, 5).map((r) => `${mdCode(r.identity)} ${mdText(r.operation)} ${mdCode(r.path)} last ${mdCode(r.lastUse)}`);
    out.push(
      `**${usage.future.length} ${usage.future.length === 1 ? 'request is' : 'requests are'} dated after the end of the log or after this review (${mdCode(usage.now)}), so not counted as use**: ` +
        `${shown.join('; ')}${usage.future.length > 5 ? `; and ${usage.future.length - 5} more` : ''}. A store whose clock is ahead, or a usage file that was edited: check where it came from.`,
      '',
    );
  }
  const entries = usage.futureEntries;
  if (entries.count > 0) {
    out.push(
      `**${entries.count} ${entries.count === 1 ? 'entry of the log is' : 'entries of the log are'} dated after the time it was read, so not counted as use** ` +
        `(at ${entries.at.map(mdCode).join(', ')}${entries.count > entries.at.length ? ', ...' : ''}). A store whose clock is ahead, or a log that was edited: check where it came from.`,
      '',
    );
  }
  if (usage.grants.length === 0) {
    out.push('The change removes or narrows no grant.');
    return out;
  }
  const denying = usage.grants.filter((g) => g.denied.length > 0).length;
  out.push(
    denying === 0
      ? 'No request in the window used what the change takes away.'
      : `**${denying} ${denying === 1 ? 'grant' : 'grants'} removed or narrowed ${denying === 1 ? 'was' : 'were'} used in the window**: the requests below are refused after the change.`,
    '',
  );
  out.push(
    mdTable(
      ['identity', 'rule (before)', 'change', 'last use in the window', 'requests this change denies'],
      usage.grants.map((g) => [
        mdCell(mdCode(g.identity)),
        mdCell(mdCode(g.rule)),
        mdCell(g.lost.length > 0 ? `${g.removal}: ${g.lost.join(', ')}` : g.removal),
        g.lastUse !== undefined ? mdCell(`${mdCode(g.lastUse)} (${daysAgo(g.lastUse, nowMs)}, ${g.count} ${g.count === 1 ? 'request' : 'requests'})`) : 'not used',
        g.denied.length === 0 ? 'none' : mdCell(g.denied.map((r) => `${mdText(r.operation)} ${mdCode(r.path)} x${r.count}, last ${mdCode(r.lastUse)}`).join('; ')),
      ]),
    ),
  );
  return out;
}
