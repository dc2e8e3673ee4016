import { PlatformRule } from './platform-rule';
import { PLATFORM_RULES } from './platform-rules';

/** Path of the rules document, relative to the repository root. */
export const RULES_DOCUMENT_FILE = 'RULES.md';

/** A table cell: pipes escaped, so that a rule text cannot break the table. */
const cell = (text: string): string => text.replace(/\|/g, '\\|');

/**
 * The rules document (`RULES.md`) for `rules`: one table row per rule, in the given order. The
 * document is generated, never hand-edited, so that it cannot drift from the rules that run.
 */
export function rulesDocument(rules: readonly PlatformRule[] = PLATFORM_RULES): string {
  return [
    '# Platform rules',
    '',
    '<!-- Generated from the rule objects in lib/rules/ by `npm run rules:doc`. Do not edit by hand. -->',
    '',
    'Checked across all stacks at every synthesis. A finding stops the synthesis, names the construct',
    'path, the field, the value and the rule id, and nothing is written.',
    '',
    'The rules read each stack\'s final document: the JSON the engine loads, after every `addOverride` of',
    'an element or a stack and whatever backend class wrote the state backend. A value an override set',
    'is checked like any other, and the finding names the override (`name set by addOverride(\'name\', …)',
    'on user/innocent`, `by the stack override resource.vault_policy.<id>.name`). Aspects and HCL output',
    '(`hclOutput`, `SYNTH_HCL_OUTPUT`) are refused: both would write what no rule read.',
    '',
    '| id | rule | spec |',
    '|---|---|---|',
    ...rules.map((r) => `| ${cell(r.id)} | ${cell(r.description)} | ${cell(r.spec ?? '')} |`),
    '',
  ].join('\n');
}
