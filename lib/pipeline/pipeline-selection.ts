import * as fs from 'fs';
import * as path from 'path';
import { CHANGED_STACKS_FILE, RETIRED_STACKS_FILE } from '../render/configuration-pipeline-yaml';

/** The synth job's selection, as its artifacts give it. */
export interface PipelineSelection {
  /** The stacks to plan and apply, in dependency order ({@link CHANGED_STACKS_FILE}). */
  readonly selected: readonly string[];
  /** The retired stacks, in order ({@link RETIRED_STACKS_FILE}); empty when the file is not needed and absent. */
  readonly retired: readonly string[];
}

/** The names of a list file: one per line, blank lines ignored. */
function readList(file: string): string[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/**
 * Reads the synth job's selection from `dir` (the job's working directory: the artifacts). A missing
 * file that the job needs fails it rather than skip its stacks.
 * @param need which lists the job reads
 * @throws Error naming the missing file
 */
export function readPipelineSelection(dir: string, need: { readonly selected: boolean; readonly retired: boolean }): PipelineSelection {
  const read = (name: string, what: string, needed: boolean): string[] => {
    const file = path.join(dir, name);
    if (fs.existsSync(file)) return readList(file);
    if (needed) throw new Error(`${name}, the synth job's ${what}, is missing (in ${dir}): the job fails rather than skip its stacks`);
    return [];
  };
  return {
    selected: read(CHANGED_STACKS_FILE, 'selection of the stacks', need.selected),
    retired: read(RETIRED_STACKS_FILE, 'list of retired stacks', need.retired),
  };
}
