/**
 * Opening a file for writing without ever writing outside the boundary, even when the model races
 * the worker by swapping directories for symlinks: each directory on the way is opened and checked
 * by its descriptor, missing parents and the file itself are made through the checked directory's
 * descriptor (so on Linux nothing is made outside, not even for a moment), the file is opened with
 * O_NOFOLLOW and without O_TRUNC, and the opened descriptor's own path is checked before a byte is
 * written. What we created and then refused is removed again.
 */
import { constants as fsConstants } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readlink, realpath, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import {
  type GitProtection,
  gitProtectedError,
  gitProtectionOf,
  isGitProtected,
} from '../sandbox/git-protection';
import { describeFsError, displayPath, resolveToolPath } from './paths';
import { type PinnedDirectory, pinDirectory } from './pinned-directory';
import type { ToolContext } from './types';
import {
  type Boundary,
  boundaryOf,
  type Checked,
  isInside,
  type OpenedFile,
  outsideError,
  pathOfDescriptor,
  readOnlyError,
  realOfMissing,
} from './workspace-boundary';

/** Symlinks followed by hand before giving up, as the kernel's ELOOP limit. */
const MAX_SYMLINK_HOPS = 40;
// No O_TRUNC: an existing file is only truncated after the check. O_NONBLOCK: a FIFO cannot hang us.
const OPEN_EXISTING = fsConstants.O_RDWR | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK;
const CREATE_NEW = OPEN_EXISTING | fsConstants.O_CREAT | fsConstants.O_EXCL;
const NEW_FILE_MODE = 0o666;

/** Options of openForWrite. */
export interface WriteOptions {
  /** Create the file (and missing parent directories) when it does not exist. */
  create: boolean;
  /** The tool's name, for the refusal messages. */
  toolName: string;
}

/** A file opened for writing inside the boundary. */
export interface WritableFile extends OpenedFile {
  /** True when this call created the file. */
  created: boolean;
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Opens the deepest existing directory on the way and makes the missing ones below it, one at a
 * time, each made through its parent's descriptor and checked by its own; returns the last one
 * still open, so the file is made in it (see pinned-directory.ts). Nothing is made before the
 * directory it goes in has been checked to be inside the write roots.
 */
async function ensureDirectory(
  dir: string,
  leaf: string,
  boundary: Boundary,
  shown: string,
  create: boolean,
): Promise<Checked<{ real: string; dir: PinnedDirectory }>> {
  const missing: string[] = [];
  let existing = dir;
  let real: string | undefined;
  for (;;) {
    try {
      real = await realpath(existing);
      break;
    } catch (error) {
      if (errorCode(error) === 'ELOOP')
        return { ok: false, error: `too many levels of symbolic links: ${shown}` };
      const parent = path.dirname(existing);
      if (parent === existing) return { ok: false, error: describeFsError(error, shown) };
      missing.unshift(path.basename(existing));
      existing = parent;
    }
  }
  if (!isInside(real, boundary.writeRoots)) {
    return { ok: false, error: outsideError(boundary, shown, path.join(real, ...missing, leaf)) };
  }
  /** Opens a directory and refuses it unless its descriptor is inside (a symlink swapped in meanwhile). */
  const pinInside = async (dirPath: string, rest: string[]): Promise<Checked<{ dir: PinnedDirectory }>> => {
    let pinned: PinnedDirectory;
    try {
      pinned = await pinDirectory(dirPath);
    } catch (error) {
      return { ok: false, error: describeFsError(error, shown) };
    }
    if (pinned.real && isInside(pinned.real, boundary.writeRoots)) return { ok: true, dir: pinned };
    await pinned.close();
    return {
      ok: false,
      error: outsideError(boundary, shown, path.join(pinned.real ?? dirPath, ...rest, leaf)),
    };
  };
  const first = await pinInside(real, missing);
  if (!first.ok) return first;
  let current = first.dir;
  for (const [index, name] of missing.entries()) {
    if (!create) {
      await current.close();
      return {
        ok: false,
        error: describeFsError(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }), shown),
      };
    }
    const next = current.child(name);
    let made = false;
    try {
      await mkdir(next);
      made = true;
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') {
        await current.close();
        return { ok: false, error: `file-write failed: ${describeFsError(error, shown)}` };
      }
    }
    const child = await pinInside(next, missing.slice(index + 1));
    if (!child.ok) {
      // Without /proc the directory was made by path and may be outside: undo it. Made through a
      // descriptor it is inside, and what is at its name now (a swapped-in symlink) is not ours.
      if (made && !current.byDescriptor) await rmdir(next).catch(() => undefined);
      await current.close();
      return child;
    }
    await current.close();
    current = child.dir;
  }
  return { ok: true, real: current.real as string, dir: current };
}

/**
 * Removes a file we created, unless what is at that name now is some other file. The descriptor's
 * own path comes first: when a swapped symlink led the open elsewhere, `target` may name an
 * unrelated file again by now, while the descriptor's path names where ours really is.
 */
async function unlinkCreated(
  candidates: ReadonlyArray<string | undefined>,
  handle: FileHandle,
): Promise<void> {
  const opened = await handle.stat();
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      const named = await lstat(candidate);
      if (opened.dev === named.dev && opened.ino === named.ino) {
        await unlink(candidate);
        return;
      }
    } catch {
      // Gone already, or replaced: try the next name.
    }
  }
}

/**
 * Opens (or creates) `name` in an open directory, never following a symlink there: a symlink comes
 * back as `link` (its target, or undefined with the error when it cannot be read) for the caller to check.
 */
async function openInDirectory(
  dir: PinnedDirectory,
  name: string,
  create: boolean,
): Promise<
  | { handle: FileHandle; created: boolean }
  | { link: string | undefined; error?: unknown }
  | { error: unknown }
> {
  const target = dir.child(name);
  try {
    if (create) {
      try {
        return { handle: await open(target, CREATE_NEW, NEW_FILE_MODE), created: true };
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw error;
      }
    }
    return { handle: await open(target, OPEN_EXISTING), created: false };
  } catch (error) {
    if (errorCode(error) !== 'ELOOP') return { error };
    try {
      return { link: await readlink(target) };
    } catch (readError) {
      return { link: undefined, error: readError };
    }
  }
}

/**
 * Opens (or creates) a file for writing inside the write roots. Symlinks are followed by hand, each
 * hop checked; the opened descriptor is checked last. Nothing is truncated or written here.
 */
export async function openForWrite(
  context: ToolContext,
  toolPath: string,
  options: WriteOptions,
): Promise<Checked<WritableFile>> {
  const boundary = await boundaryOf(context);
  if (boundary.readOnly) return { ok: false, error: readOnlyError(options.toolName) };
  let lexical = resolveToolPath(context.workspace, toolPath);
  const shown = displayPath(context.workspace, lexical);
  // Checked before anything is made (no empty hooks directory left behind), and again on the descriptor.
  const gitProtected = await Promise.all(boundary.writeRoots.map(gitProtectionOf));
  if (isGitPath(await realOfMissing(lexical), gitProtected))
    return { ok: false, error: gitProtectedError(options.toolName, shown) };
  for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
    const name = path.basename(lexical);
    if (path.dirname(lexical) === lexical) return { ok: false, error: `${shown} is not a file path` };
    const parent = await ensureDirectory(path.dirname(lexical), name, boundary, shown, options.create);
    if (!parent.ok) return parent;
    const opened = await openInDirectory(parent.dir, name, options.create);
    if ('link' in opened) {
      await parent.dir.close();
      if (opened.link === undefined) return { ok: false, error: describeFsError(opened.error, shown) };
      // The last component is a symlink: follow it by hand and check where it leads.
      lexical = path.resolve(parent.real, opened.link);
      const leadsTo = await realOfMissing(lexical);
      if (!isInside(leadsTo, boundary.writeRoots))
        return { ok: false, error: outsideError(boundary, shown, leadsTo) };
      continue;
    }
    if ('error' in opened) {
      await parent.dir.close();
      return { ok: false, error: describeFsError(opened.error, shown) };
    }
    try {
      const checked = await checkOpened(
        opened.handle,
        parent.dir.child(name),
        opened.created,
        boundary,
        shown,
        { toolName: options.toolName, gitProtected },
      );
      if (!checked.ok) return checked;
      return { ok: true, handle: opened.handle, real: checked.real, shown, created: opened.created };
    } finally {
      await parent.dir.close();
    }
  }
  return { ok: false, error: `too many levels of symbolic links: ${shown}` };
}

/** The descriptor's own checks: inside the boundary, a regular file, not hard-linked elsewhere. */
async function checkOpened(
  handle: FileHandle,
  target: string,
  created: boolean,
  boundary: Boundary,
  shown: string,
  git: { toolName: string; gitProtected: GitProtection[] },
): Promise<Checked<{ real: string }>> {
  const opened = await pathOfDescriptor(handle, target);
  const refuse = async (error: string): Promise<Checked<{ real: string }>> => {
    if (created) await unlinkCreated([opened, target], handle);
    await handle.close();
    return { ok: false, error };
  };
  if (!opened || !isInside(opened, boundary.writeRoots))
    return refuse(outsideError(boundary, shown, opened ?? target));
  if (isGitPath(opened, git.gitProtected)) return refuse(gitProtectedError(git.toolName, shown));
  const stat = await handle.stat();
  if (!stat.isFile()) return refuse(`${shown} is not a regular file (a device, FIFO or socket)`);
  // Another name of the same file may be outside the workspace (a hard link made with the sandbox off).
  if (stat.nlink > 1) {
    return refuse(
      `${shown} has ${stat.nlink} hard links; file tools do not write to hard-linked files, whose other names may be outside the workspace`,
    );
  }
  return { ok: true, real: opened };
}

/** True when a real path is a git hook or git config the file tools never write. */
function isGitPath(real: string, gitProtected: readonly GitProtection[]): boolean {
  return gitProtected.some((protection) => isGitProtected(real, protection));
}

/** Replaces a file's content through an open descriptor (truncating only now, after every check). */
export async function replaceContent(handle: FileHandle, content: string | Buffer): Promise<void> {
  await handle.truncate(0);
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, written);
    written += bytesWritten;
  }
}
