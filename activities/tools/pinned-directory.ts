/**
 * A directory held open while names are made in it. On Linux, `/proc/self/fd/<fd>/<name>` resolves
 * `name` in the directory the descriptor holds, whatever its path has become (Node has no openat),
 * so once a directory is checked to be inside the workspace, a file or directory made through it
 * lands inside, even if a parent on the way is swapped for a symlink the next instant. Where there is
 * no /proc, names are joined to the checked real path: a race can then reach outside for a moment,
 * and the callers' descriptor checks undo it.
 */
import { existsSync, constants as fsConstants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import path from 'node:path';
import { pathOfDescriptor } from './workspace-boundary';

/** Where this process's open descriptors are named. */
const PROC_SELF_FD = '/proc/self/fd';

let procFdAvailable: boolean | undefined;

/** True when names can be resolved through a directory descriptor (Linux with /proc mounted). */
function resolvesThroughDescriptor(): boolean {
  procFdAvailable ??= existsSync(PROC_SELF_FD);
  return procFdAvailable;
}

/** An open directory and the path it had when it was opened. */
export interface PinnedDirectory {
  /** The real path of the opened directory (from its descriptor); undefined when it cannot be named (removed meanwhile). */
  real: string | undefined;
  /** True when `child` names resolve in the opened directory itself, not by its path. */
  byDescriptor: boolean;
  /** A path naming `name` inside the opened directory. */
  child(name: string): string;
  close(): Promise<void>;
}

/** Opens a directory and reads back where the descriptor really is. */
export async function pinDirectory(dir: string): Promise<PinnedDirectory> {
  const handle: FileHandle = await open(dir, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
  const real = await pathOfDescriptor(handle, dir);
  const byDescriptor = resolvesThroughDescriptor();
  return {
    real,
    byDescriptor,
    child: (name) => (byDescriptor ? `${PROC_SELF_FD}/${handle.fd}/${name}` : path.join(real ?? dir, name)),
    close: () => handle.close(),
  };
}
