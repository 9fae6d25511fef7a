/**
 * Finds a goal's project instructions on the tool host (the rule Codex uses): the user's
 * `$GOALRUN_HOME/AGENTS.md` first, then `AGENTS.md` in each directory from the git root down to
 * the workspace, `CLAUDE.md` where a directory has no `AGENTS.md`. Nested files below the
 * workspace reach the model when it first works in their directory (tool-activity).
 */
import { lstatSync, readlinkSync } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { INSTRUCTION_FILE_NAMES, type InstructionSource } from '../../core/extensions/project-instructions';
import { readWorkspaceFile } from '../workspace-files/read-workspace-file';

/** The user's own instruction file ($GOALRUN_HOME/AGENTS.md) is read only this far (the cap cuts it further). */
const FILE_READ_MAX_BYTES = 1024 * 1024;

/** The project instructions in effect, and the files that were there but not read (one note each). */
export interface FoundInstructions {
  sources: InstructionSource[];
  refused: string[];
}

/** One directory's instruction file under `root` as the reader read it, and the files it refused there. */
interface Found {
  file: { relative: string; text: string } | null;
  /** One note per file that was there and not read. */
  refused: Array<{ relative: string; note: string }>;
}

/**
 * The instruction file of `dir` (relative to `root`): AGENTS.md, else CLAUDE.md, read by the workspace
 * reader. A link is never followed; a link to its sibling (`AGENTS.md -> CLAUDE.md`, a common way of
 * keeping one file) falls through to the sibling quietly, any other link is refused with a note, and
 * the next name is tried.
 */
async function instructionFileUnder(root: string, dir: string): Promise<Found> {
  const refused: Found['refused'] = [];
  for (const [index, name] of INSTRUCTION_FILE_NAMES.entries()) {
    const relative = dir === '' ? name : path.join(dir, name);
    const read = await readWorkspaceFile(root, relative, 'instructions');
    if (read.ok) return { file: { relative, text: read.text }, refused };
    if (read.missing) continue;
    const sibling = INSTRUCTION_FILE_NAMES[index + 1];
    if (sibling && linksTo(root, relative, sibling)) continue;
    refused.push({ relative, note: read.note });
  }
  return { file: null, refused };
}

/** Whether `relative` under `root` is a symbolic link whose target is `sibling` in its own directory. */
function linksTo(root: string, relative: string, sibling: string): boolean {
  try {
    const file = path.join(root, relative);
    if (!lstatSync(file).isSymbolicLink()) return false;
    const target = readlinkSync(file);
    return target === sibling || target === `./${sibling}`;
  } catch {
    return false;
  }
}

/** The nearest directory at or above `dir` that holds `.git` (a directory, or a file in worktrees), or null. */
export async function gitRootOf(dir: string): Promise<string | null> {
  let current = dir;
  for (;;) {
    if (hasGitEntry(current)) return current;
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

function hasGitEntry(dir: string): boolean {
  try {
    lstatSync(path.join(dir, '.git'));
    return true;
  } catch {
    return false;
  }
}

/** The directories from `top` down to `bottom` (both included), relative to `top`; `bottom` must be inside `top`. */
function chain(top: string, bottom: string): string[] {
  const dirs = [''];
  const rest = path.relative(top, bottom);
  if (rest === '') return dirs;
  let current = '';
  for (const part of rest.split(path.sep)) {
    current = current === '' ? part : path.join(current, part);
    dirs.push(current);
  }
  return dirs;
}

async function readUserFile(file: string): Promise<string | null> {
  try {
    if (!(await stat(file)).isFile()) return null;
    return (await readFile(file)).subarray(0, FILE_READ_MAX_BYTES).toString('utf8');
  } catch {
    return null;
  }
}

/**
 * The instruction files in effect for a workspace, in the order they go into the system prompt: the
 * user's own (`$GOALRUN_HOME`, read as any file of the user's), then the repository's from its git
 * root down to the workspace, each read by the workspace reader with the git root as its boundary.
 */
export async function findProjectInstructions(
  workspace: string,
  goalrunHome: string,
): Promise<FoundInstructions> {
  const sources: InstructionSource[] = [];
  const refused: string[] = [];
  for (const name of INSTRUCTION_FILE_NAMES) {
    const text = await readUserFile(path.join(goalrunHome, name));
    if (text === null) continue;
    sources.push({ label: `$GOALRUN_HOME/${name}`, text });
    break;
  }
  let real: string;
  try {
    real = await realpath(workspace);
  } catch {
    return { sources, refused };
  }
  const root = (await gitRootOf(real)) ?? real;
  for (const dir of chain(root, real)) {
    const found = await instructionFileUnder(root, dir);
    if (found.file) sources.push({ label: found.file.relative, text: found.file.text });
    refused.push(...found.refused.map((file) => file.note));
  }
  return { sources, refused };
}

/** A nested instruction file a model working somewhere has not been shown: its text, or why it was not read. */
export type NestedInstructions = { label: string; text: string } | { label: string; refused: string };

/**
 * The directories strictly below the workspace, down to the one holding `target`, that have an
 * instruction file: the files a model working at `target` has not been shown by the system prompt,
 * read by the workspace reader (a link is refused, with the note for the model). The target's
 * directory is resolved to its real path; a target outside the workspace has none.
 */
export async function nestedInstructions(workspace: string, target: string): Promise<NestedInstructions[]> {
  let realWorkspace: string;
  let dir: string;
  try {
    realWorkspace = await realpath(workspace);
    const resolved = path.resolve(workspace, target);
    let existing = resolved;
    // The target may not exist yet (a file about to be written): its nearest existing parent counts.
    for (;;) {
      try {
        existing = await realpath(existing);
        break;
      } catch {
        const parent = path.dirname(existing);
        if (parent === existing) return [];
        existing = parent;
      }
    }
    dir = (await stat(existing)).isDirectory() ? existing : path.dirname(existing);
  } catch {
    return [];
  }
  const relative = path.relative(realWorkspace, dir);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return [];
  const found: NestedInstructions[] = [];
  for (const sub of chain(realWorkspace, dir).slice(1)) {
    const here = await instructionFileUnder(realWorkspace, sub);
    for (const file of here.refused) found.push({ label: file.relative, refused: file.note });
    if (here.file) found.push({ label: here.file.relative, text: here.file.text });
  }
  return found;
}
