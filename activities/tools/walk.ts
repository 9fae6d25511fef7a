/**
 * Walks a directory tree for glob and grep: files in name order, skipping chosen directory names,
 * never following symlinked directories (they can loop), heartbeating on large trees.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { globNamesDir } from './glob-pattern';

/** Directories glob and grep skip unless asked for by name: huge, generated, rarely what is searched. */
export const DEFAULT_SKIPPED_DIRS: readonly string[] = ['.git', 'node_modules'];
/** The default skipped directories that a glob pattern does not name (those it names are searched). */
export function skippedDirsFor(pattern: string | undefined): Set<string> {
  return new Set(DEFAULT_SKIPPED_DIRS.filter((dir) => pattern === undefined || !globNamesDir(pattern, dir)));
}

/** How often a long walk reports liveness. */
const WALK_HEARTBEAT_INTERVAL_MS = 1_000;

/** A file found by the walk. */
export interface WalkedFile {
  absolute: string;
  /** Relative to the walk's root, with `/` separators. */
  relative: string;
}

/** How to walk. */
export interface WalkOptions {
  skipDirs?: ReadonlySet<string>;
  /** Checked between directories; the walk throws the signal's reason once it fires. */
  signal?: AbortSignal;
  /** Called about once a second while walking. */
  heartbeat?: () => void;
}

/** Yields every non-directory entry under `root` (files and symlinks), depth first, in name order. */
export async function* walkFiles(root: string, options: WalkOptions = {}): AsyncGenerator<WalkedFile> {
  const skipDirs = options.skipDirs ?? new Set<string>();
  let lastBeat = Date.now();
  const directories: Array<{ absolute: string; relative: string }> = [{ absolute: root, relative: '' }];
  while (directories.length > 0) {
    options.signal?.throwIfAborted();
    if (options.heartbeat && Date.now() - lastBeat >= WALK_HEARTBEAT_INTERVAL_MS) {
      lastBeat = Date.now();
      options.heartbeat();
    }
    const directory = directories.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(directory.absolute, { withFileTypes: true });
    } catch {
      // Unreadable or vanished directories are skipped: a search should not fail on one of them.
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirectories: Array<{ absolute: string; relative: string }> = [];
    for (const entry of entries) {
      const absolute = path.join(directory.absolute, entry.name);
      const relative = directory.relative === '' ? entry.name : `${directory.relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!skipDirs.has(entry.name)) subdirectories.push({ absolute, relative });
      } else {
        yield { absolute, relative };
      }
    }
    // Reversed onto the stack so subdirectories are visited in name order.
    for (let index = subdirectories.length - 1; index >= 0; index -= 1)
      directories.push(subdirectories[index]);
  }
}
