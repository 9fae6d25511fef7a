/**
 * Finds a goal's project instructions on the tool host (the rule Codex uses): the user's
 * `$GOALRUN_HOME/AGENTS.md` first, then `AGENTS.md` in each directory from the git root down to
 * the workspace, `CLAUDE.md` where a directory has no `AGENTS.md`. Nested files below the
 * workspace reach the model when it first works in their directory (tool-activity).
 */
import { lstat, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { INSTRUCTION_FILE_NAMES, type InstructionSource } from '../../core/extensions/project-instructions';

/** A single instruction file larger than this is read only this far (the cap cuts it further). */
const FILE_READ_MAX_BYTES = 1024 * 1024;

/** The instruction file of one directory (AGENTS.md, else CLAUDE.md), or null. */
export async function instructionFileIn(dir: string): Promise<string | null> {
  for (const name of INSTRUCTION_FILE_NAMES) {
    const file = path.join(dir, name);
    try {
      if ((await stat(file)).isFile()) return file;
    } catch {
      // not here
    }
  }
  return null;
}

async function readCapped(file: string): Promise<string | null> {
  try {
    const buffer = await readFile(file);
    return buffer.subarray(0, FILE_READ_MAX_BYTES).toString('utf8');
  } catch {
    return null;
  }
}

/** The nearest directory at or above `dir` that holds `.git` (a directory, or a file in worktrees), or null. */
export async function gitRootOf(dir: string): Promise<string | null> {
  let current = dir;
  for (;;) {
    try {
      await lstat(path.join(current, '.git'));
      return current;
    } catch {
      // keep looking
    }
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

/** The directories from `top` down to `bottom` (both included); `bottom` must be inside `top`. */
function chain(top: string, bottom: string): string[] {
  const dirs = [top];
  const rest = path.relative(top, bottom);
  if (rest === '') return dirs;
  let current = top;
  for (const part of rest.split(path.sep)) {
    current = path.join(current, part);
    dirs.push(current);
  }
  return dirs;
}

/** The instruction files in effect for a workspace, in the order they go into the system prompt. */
export async function findProjectInstructions(
  workspace: string,
  goalrunHome: string,
): Promise<InstructionSource[]> {
  const sources: InstructionSource[] = [];
  const globalFile = await instructionFileIn(goalrunHome);
  if (globalFile) {
    const text = await readCapped(globalFile);
    if (text !== null) sources.push({ label: `$GOALRUN_HOME/${path.basename(globalFile)}`, text });
  }
  let real: string;
  try {
    real = await realpath(workspace);
  } catch {
    return sources;
  }
  const root = (await gitRootOf(real)) ?? real;
  for (const dir of chain(root, real)) {
    const file = await instructionFileIn(dir);
    if (!file) continue;
    const text = await readCapped(file);
    if (text !== null) sources.push({ label: path.relative(root, file) || path.basename(file), text });
  }
  return sources;
}

/**
 * The directories strictly below the workspace, down to the one holding `target`, that have an
 * instruction file: the files a model working at `target` has not been shown by the system prompt.
 * Both paths are resolved to real paths; a target outside the workspace has none.
 */
export async function nestedInstructionFiles(
  workspace: string,
  target: string,
): Promise<Array<{ label: string; file: string }>> {
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
  const found: Array<{ label: string; file: string }> = [];
  for (const sub of chain(realWorkspace, dir).slice(1)) {
    const file = await instructionFileIn(sub);
    if (file) found.push({ label: path.relative(realWorkspace, file), file });
  }
  return found;
}

/** The text of an instruction file, or null when it cannot be read. */
export async function readInstructionFile(file: string): Promise<string | null> {
  return readCapped(file);
}
