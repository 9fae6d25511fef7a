/**
 * Tool binaries that live in a hidden directory (node from nvm under ~/.nvm, ~/.cargo/bin, ~/go/bin)
 * would vanish with $HOME. The PATH directories under a hidden directory are shown again read-only,
 * and so is what their symlinks point at (npm's bin/npm is a link into lib/node_modules/npm), but
 * never the rest of the hidden directory.
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { isWithin } from './bwrap-args';

/** At most this many symlinks of one PATH directory are followed (a bin dir with thousands is not a toolchain). */
const MAX_LINKS_PER_DIR = 256;
/** At most this many directories are exposed in all. */
const MAX_EXPOSED = 64;

function realDir(dir: string): string | undefined {
  try {
    const real = realpathSync(dir);
    return statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** The package directory of a file inside node_modules (`…/node_modules/@scope/pkg`), else its directory. */
export function exposureRootOf(file: string): string {
  const parts = file.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at >= 0 && at + 1 < parts.length - 1) {
    const scoped = parts[at + 1].startsWith('@') && at + 2 < parts.length - 1;
    return parts.slice(0, at + (scoped ? 3 : 2)).join('/');
  }
  return path.dirname(file);
}

/**
 * The directories to show read-only again: each PATH entry (and the worker's own node) that
 * resolves under a hidden directory, plus the package roots its symlinks lead to there.
 * `visible` are directories already bound (the workspace): nothing under them needs exposing.
 */
export function exposedPathDirs(
  pathValue: string | undefined,
  hidden: readonly string[],
  visible: readonly string[],
  extraDirs: readonly string[] = [path.dirname(process.execPath)],
): string[] {
  const isHidden = (dir: string) =>
    hidden.some((h) => h !== '/' && isWithin(dir, h)) && !visible.some((v) => isWithin(dir, v));
  const found = new Set<string>();
  const entries = [...(pathValue ?? '').split(path.delimiter), ...extraDirs].filter((dir) =>
    path.isAbsolute(dir),
  );
  for (const entry of entries) {
    const dir = realDir(entry);
    if (!dir || !isHidden(dir)) continue;
    found.add(dir);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names.slice(0, MAX_LINKS_PER_DIR)) {
      let target: string;
      try {
        target = realpathSync(path.join(dir, name));
      } catch {
        continue;
      }
      if (!isWithin(target, dir) && isHidden(target)) found.add(exposureRootOf(target));
    }
  }
  // A directory inside another exposed one adds nothing.
  const sorted = [...found].sort((a, b) => a.length - b.length);
  const kept: string[] = [];
  for (const dir of sorted) if (!kept.some((outer) => isWithin(dir, outer))) kept.push(dir);
  return kept.slice(0, MAX_EXPOSED);
}

/** PATH directories change rarely; scanning them costs milliseconds per command, so answers are kept this long. */
const EXPOSURE_CACHE_MS = 60_000;
const exposureCache = new Map<string, { at: number; dirs: string[] }>();

/** exposedPathDirs, remembered for a minute per PATH, hidden and visible directories. */
export function cachedExposedPathDirs(
  pathValue: string | undefined,
  hidden: readonly string[],
  visible: readonly string[],
): string[] {
  const key = JSON.stringify([pathValue, hidden, visible]);
  const cached = exposureCache.get(key);
  if (cached && Date.now() - cached.at < EXPOSURE_CACHE_MS) return cached.dirs;
  const dirs = exposedPathDirs(pathValue, hidden, visible);
  // Workspaces vary per goal; a bounded cache cannot grow with them.
  if (exposureCache.size > 100) exposureCache.clear();
  exposureCache.set(key, { at: Date.now(), dirs });
  return dirs;
}
