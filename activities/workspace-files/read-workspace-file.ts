/**
 * The one reader of the untrusted workspace on the host (issue 24 §1). Instruction files, the
 * project's config, hooks and MCP servers, an `--mcp-config` file the model can write: whatever goalrun
 * itself reads of a workspace goes through here. It follows no symbolic link at any component below
 * the root it is given, opens the file without following one (O_NOFOLLOW), checks that what it opened
 * lies inside the root (the descriptor's path in /proc/self/fd, so a directory swapped for a link in
 * between changes nothing), reads only regular files, and caps the size per kind of file. A refusal
 * is a note saying why, never an exception: the goal goes on without the file.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
} from 'node:fs';
import path from 'node:path';
import { LINK_REFUSAL, WORKSPACE_FILE_RULES, type WorkspaceFileKind } from './trust-rules';

/** What reading a workspace file came to. */
export type WorkspaceRead =
  /** The text, its size, whether it was cut at the kind's cap, and the digest of what was read. */
  | { ok: true; text: string; bytes: number; cut: boolean; sha256: string }
  /** Not there: nothing to say. */
  | { ok: false; missing: true }
  /** There, but not read: one line saying why. */
  | { ok: false; missing: false; note: string };

/** What is at a workspace path, looked at without reading it or following a link. */
export type WorkspaceEntry = 'missing' | 'file' | 'link' | 'other';

const OPEN_FLAGS =
  fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK | fsConstants.O_NOCTTY;

function isWithin(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

/** The parts of a relative path, or null when it is absolute or climbs out of its root. */
function partsOf(relative: string): string[] | null {
  if (path.isAbsolute(relative)) return null;
  const parts = path
    .normalize(relative)
    .split(path.sep)
    .filter((part) => part !== '' && part !== '.');
  return parts.length === 0 || parts.includes('..') ? null : parts;
}

/**
 * Looks at each component of `relative` under `root` with lstat: `link` when one of them is a
 * symbolic link, `other` when the last is not a regular file (or a middle one no directory).
 */
export function workspaceEntry(root: string, relative: string): { entry: WorkspaceEntry; at?: string } {
  const parts = partsOf(relative);
  if (!parts) return { entry: 'other', at: relative };
  let current = root;
  for (const [index, part] of parts.entries()) {
    current = path.join(current, part);
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(current);
    } catch (err) {
      if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return { entry: 'missing' };
      return { entry: 'other', at: parts.slice(0, index + 1).join('/') };
    }
    const shown = parts.slice(0, index + 1).join('/');
    if (stat.isSymbolicLink()) return { entry: 'link', at: shown };
    const last = index === parts.length - 1;
    if (last ? !stat.isFile() : !stat.isDirectory()) return { entry: 'other', at: shown };
  }
  return { entry: 'file' };
}

/**
 * Reads `relative` under `root` (the workspace, or for instructions the git root above it) as a file
 * of `kind`. `label` names it in notes (default: the relative path).
 */
export function readWorkspaceFileSync(
  root: string,
  relative: string,
  kind: WorkspaceFileKind,
  label: string = relative,
): WorkspaceRead {
  const rule = WORKSPACE_FILE_RULES[kind];
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return { ok: false, missing: true };
  }
  const looked = workspaceEntry(realRoot, relative);
  if (looked.entry === 'missing') return { ok: false, missing: true };
  if (looked.entry === 'link') {
    const where = looked.at === relative ? '' : ` (${looked.at} is one)`;
    return {
      ok: false,
      missing: false,
      note: `${label} is a symbolic link${where}; not read: ${LINK_REFUSAL}`,
    };
  }
  if (looked.entry === 'other') {
    return { ok: false, missing: false, note: `${label} is not a regular file; not read` };
  }
  let fd: number;
  try {
    fd = openSync(path.join(realRoot, relative), OPEN_FLAGS);
  } catch (err) {
    if (code(err) === 'ENOENT') return { ok: false, missing: true };
    if (code(err) === 'ELOOP') {
      return { ok: false, missing: false, note: `${label} is a symbolic link; not read: ${LINK_REFUSAL}` };
    }
    return { ok: false, missing: false, note: `${label} cannot be read: ${(err as Error).message}` };
  }
  try {
    const opened = openedPath(fd);
    if (opened !== null && !isWithin(opened, realRoot)) {
      return {
        ok: false,
        missing: false,
        note: `${label} leads out of ${realRoot} (to ${opened}); not read: ${LINK_REFUSAL}`,
      };
    }
    const stat = fstatSync(fd);
    if (!stat.isFile())
      return { ok: false, missing: false, note: `${label} is not a regular file; not read` };
    if (stat.size > rule.maxBytes && rule.overCap === 'refuse') {
      return {
        ok: false,
        missing: false,
        note: `${label} has ${stat.size} bytes; goalrun reads at most ${rule.maxBytes} of a ${rule.file}; not read`,
      };
    }
    const want = Math.min(stat.size, rule.maxBytes);
    const buffer = Buffer.alloc(want);
    let read = 0;
    while (read < want) {
      const got = readSync(fd, buffer, read, want - read, read);
      if (got === 0) break;
      read += got;
    }
    const bytes = buffer.subarray(0, read);
    return {
      ok: true,
      text: bytes.toString('utf8'),
      bytes: stat.size,
      cut: stat.size > read,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    };
  } catch (err) {
    return { ok: false, missing: false, note: `${label} cannot be read: ${(err as Error).message}` };
  } finally {
    closeSync(fd);
  }
}

/** As readWorkspaceFileSync, for async callers (the files are capped small: the read itself is quick). */
export async function readWorkspaceFile(
  root: string,
  relative: string,
  kind: WorkspaceFileKind,
  label?: string,
): Promise<WorkspaceRead> {
  return readWorkspaceFileSync(root, relative, kind, label);
}

/** The real path of an open descriptor (Linux), or null where /proc is not there to say. */
function openedPath(fd: number): string | null {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
}

/**
 * Where `file` (an absolute path) lies relative to the first of `roots` that holds it, real paths
 * compared, or null when it lies in none: for a file the user named that the model may be able to
 * write (an `--mcp-config` in the workspace).
 */
export function insideRoots(
  file: string,
  roots: readonly string[],
): { root: string; relative: string } | null {
  const absolute = path.resolve(file);
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch {
    real = absolute;
  }
  for (const root of roots) {
    let realRoot: string;
    try {
      realRoot = realpathSync(root);
    } catch {
      continue;
    }
    // Either path may run through a link: the file counts as inside when either form is.
    for (const candidate of [absolute, real]) {
      if (isWithin(candidate, realRoot) && candidate !== realRoot)
        return { root: realRoot, relative: path.relative(realRoot, candidate) };
      const rootGiven = path.resolve(root);
      if (isWithin(candidate, rootGiven) && candidate !== rootGiven)
        return { root: rootGiven, relative: path.relative(rootGiven, candidate) };
    }
  }
  return null;
}
