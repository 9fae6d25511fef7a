/**
 * The workspace boundary of the file tools, which run in the worker and not in the sandbox. Paths
 * are resolved to real paths (every symlink followed) and refused outside the workspace and the
 * goal's writable roots. Files are opened first and checked by what was opened (the descriptor's
 * path in /proc/self/fd), so a symlink swapped in between the check and the open changes nothing.
 */
import { constants as fsConstants } from 'node:fs';
import { type FileHandle, open, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_SANDBOX } from '../../core/sandbox-settings';
import { isWithin } from '../sandbox/bwrap-args';
import { describeFsError, displayPath, resolveToolPath } from './paths';
import type { ToolContext } from './types';

/** Where a goal's file tools may read and write (real paths). */
export interface Boundary {
  workspace: string;
  /** The workspace and the writable roots: file tools read only here. */
  readRoots: string[];
  /** Where they write: the same, or nothing in a read-only sandbox. */
  writeRoots: string[];
  readOnly: boolean;
}

/** Result of resolving or opening a path. */
export type Checked<T> = ({ ok: true } & T) | { ok: false; error: string };

async function realOrUndefined(dir: string): Promise<string | undefined> {
  try {
    return await realpath(dir);
  } catch {
    return undefined;
  }
}

/** The boundary of a tool call, from the workspace and the goal's sandbox settings. */
export async function boundaryOf(context: ToolContext): Promise<Boundary> {
  const settings = context.sandbox ?? DEFAULT_SANDBOX;
  const workspace = (await realOrUndefined(context.workspace)) ?? path.resolve(context.workspace);
  const roots = [workspace];
  for (const root of settings.writableRoots) {
    const real = await realOrUndefined(root);
    if (real) roots.push(real);
  }
  const readOnly = settings.mode === 'read-only';
  return { workspace, readRoots: roots, writeRoots: readOnly ? [] : roots, readOnly };
}

/** True when a real path is one of the roots or below one. */
export function isInside(real: string, roots: readonly string[]): boolean {
  return roots.some((root) => isWithin(real, root));
}

/** The refusal for a path outside the boundary, naming the rule and where the path led. */
export function outsideError(boundary: Boundary, shown: string, real: string): string {
  const where = boundary.readRoots.length > 1 ? 'the workspace or a writable root' : 'the workspace';
  const via = shown === real ? '' : ` (it resolves to ${real})`;
  return `outside the workspace: ${shown}${via}; file tools only work inside ${where} (${boundary.workspace})`;
}

/** The refusal of a write in a read-only sandbox. */
export function readOnlyError(toolName: string): string {
  return `read-only sandbox: ${toolName} cannot change files (the goal runs with sandbox mode read-only)`;
}

/**
 * The real path a missing path would have: the real path of its deepest existing ancestor plus the
 * missing rest. Symlinks in the missing rest cannot exist, since those names do not exist.
 */
export async function realOfMissing(lexical: string): Promise<string> {
  const rest: string[] = [];
  let current = lexical;
  for (;;) {
    const parent = path.dirname(current);
    rest.unshift(path.basename(current));
    if (parent === current) return lexical;
    const real = await realOrUndefined(parent);
    if (real) return path.join(real, ...rest);
    current = parent;
  }
}

/** Resolves a path argument to a real path inside the read roots (for directories: glob, grep). */
export async function resolveForRead(
  context: ToolContext,
  toolPath: string,
): Promise<Checked<{ real: string; shown: string; boundary: Boundary }>> {
  const boundary = await boundaryOf(context);
  const lexical = resolveToolPath(context.workspace, toolPath);
  const shown = displayPath(context.workspace, lexical);
  let real: string;
  try {
    real = await realpath(lexical);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return { ok: false, error: `too many levels of symbolic links: ${shown}` };
    const guess = await realOfMissing(lexical);
    if (!isInside(guess, boundary.readRoots))
      return { ok: false, error: outsideError(boundary, shown, guess) };
    return { ok: false, error: describeFsError(error, shown) };
  }
  if (!isInside(real, boundary.readRoots)) return { ok: false, error: outsideError(boundary, shown, real) };
  return { ok: true, real, shown, boundary };
}

/**
 * The path an open descriptor refers to. Linux names it in /proc/self/fd; elsewhere the real path
 * of `expected` counts only when it is the same file (device and inode) as the descriptor.
 */
export async function pathOfDescriptor(handle: FileHandle, expected: string): Promise<string | undefined> {
  try {
    const link = await readlink(`/proc/self/fd/${handle.fd}`);
    return link.endsWith(' (deleted)') ? undefined : link;
  } catch {
    try {
      const real = await realpath(expected);
      const [opened, named] = await Promise.all([handle.stat(), stat(real)]);
      return opened.dev === named.dev && opened.ino === named.ino ? real : undefined;
    } catch {
      return undefined;
    }
  }
}

/** An open file inside the boundary. */
export interface OpenedFile {
  handle: FileHandle;
  real: string;
  shown: string;
}

// O_NONBLOCK: opening a FIFO the model made must not hang the worker.
const READ_FLAGS = fsConstants.O_RDONLY | fsConstants.O_NONBLOCK;

/** Opens a file for reading, checking what was opened against the read roots. */
export async function openForRead(context: ToolContext, toolPath: string): Promise<Checked<OpenedFile>> {
  const resolved = await resolveForRead(context, toolPath);
  if (!resolved.ok) return resolved;
  let handle: FileHandle;
  try {
    handle = await open(resolved.real, READ_FLAGS);
  } catch (error) {
    return { ok: false, error: describeFsError(error, resolved.shown) };
  }
  const opened = await pathOfDescriptor(handle, resolved.real);
  if (!opened || !isInside(opened, resolved.boundary.readRoots)) {
    await handle.close();
    return { ok: false, error: outsideError(resolved.boundary, resolved.shown, opened ?? resolved.real) };
  }
  const stat = await handle.stat();
  if (stat.isDirectory()) {
    await handle.close();
    return {
      ok: false,
      error: describeFsError(Object.assign(new Error('EISDIR'), { code: 'EISDIR' }), resolved.shown),
    };
  }
  if (!stat.isFile()) {
    await handle.close();
    return { ok: false, error: `${resolved.shown} is not a regular file (a device, FIFO or socket)` };
  }
  return { ok: true, handle, real: opened, shown: resolved.shown };
}
