/**
 * Where a workspace's git repository is, read from its files on the host without running git: the
 * files that say where a repository is (`.git`, a gitfile, `commondir`, `objects/info/alternates`)
 * are the model's to write, so each one is checked before any git runs on them. A `commondir` or an
 * alternate that leads anywhere but the repository's own directories is refused with the reason:
 * that is how a model would point git at a config it wrote (`core.fsmonitor`) or at objects it owns.
 */
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { RepositoryLayout } from '../../core/workspace-snapshot-state';
import { isWithin } from '../sandbox/bwrap-args';

export type { RepositoryLayout };

/** What a workspace is in: no repository, a repository, or one whose files point elsewhere. */
export type RepositoryLookup =
  | { kind: 'none' }
  | { kind: 'found'; layout: RepositoryLayout }
  | { kind: 'refused'; top: string; reason: string };

/** The most of a gitfile, `commondir` or `alternates` file that is read (git's own are a line or a few). */
const POINTER_FILE_MAX_BYTES = 64 * 1024;
/** Alternates of alternates are followed this deep (git's own limit is 5). */
const MAX_ALTERNATE_DEPTH = 5;

function lstatKind(file: string): 'dir' | 'file' | 'link' | 'other' | undefined {
  try {
    const stat = lstatSync(file);
    if (stat.isSymbolicLink()) return 'link';
    if (stat.isDirectory()) return 'dir';
    return stat.isFile() ? 'file' : 'other';
  } catch {
    return undefined;
  }
}

function realOrUndefined(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/** A small regular file's text; undefined when it is missing, not a regular file, or too large. */
function readPointerFile(file: string): string | undefined {
  if (lstatKind(file) !== 'file') return undefined;
  const text = readFileSync(file);
  return text.length > POINTER_FILE_MAX_BYTES ? undefined : text.toString('utf8');
}

/** The layout with the same three directories (a repository made during a goal has others). */
export function sameRepository(a: RepositoryLayout, b: RepositoryLayout): boolean {
  return a.top === b.top && a.gitDir === b.gitDir && a.commonDir === b.commonDir;
}

/**
 * The repository a workspace is in, found as git finds it (the nearest `.git` above the workspace,
 * a directory or a gitfile) and checked: see {@link repositoryProblem}.
 */
export function findRepository(workspace: string): RepositoryLookup {
  const start = realOrUndefined(workspace);
  if (!start) return { kind: 'none' };
  for (let dir = start; ; dir = path.dirname(dir)) {
    const found = repositoryAt(dir);
    if (found) return found;
    if (path.dirname(dir) === dir) return { kind: 'none' };
  }
}

/** The repository whose work tree's top is `dir`, or undefined when `dir` has no usable `.git`. */
function repositoryAt(top: string): RepositoryLookup | undefined {
  const dotGit = path.join(top, '.git');
  const kind = lstatKind(dotGit);
  if (kind === undefined || kind === 'other') return undefined;
  let gitDir: string | undefined;
  if (kind === 'dir' || (kind === 'link' && lstatKind(realOrUndefined(dotGit) ?? '') === 'dir')) {
    gitDir = realOrUndefined(dotGit);
    // git goes on looking above a .git directory that is not a repository.
    if (!gitDir || lstatKind(path.join(gitDir, 'HEAD')) === undefined) return undefined;
  } else {
    const text = readPointerFile(realOrUndefined(dotGit) ?? dotGit);
    const match = text === undefined ? null : /^gitdir: (.+?)\r?$/.exec(text.split('\n')[0] ?? '');
    if (!match) return { kind: 'refused', top, reason: `${dotGit} is not a gitfile git can read` };
    gitDir = realOrUndefined(path.resolve(top, match[1]));
    if (!gitDir || lstatKind(gitDir) !== 'dir')
      return { kind: 'refused', top, reason: `${dotGit} names ${match[1]}, which is not a directory` };
  }
  const common = commonDirOf(gitDir);
  if (typeof common !== 'string') return { kind: 'refused', top, reason: common.problem };
  const layout = { top, gitDir, commonDir: common };
  const problem = repositoryProblem(layout);
  return problem ? { kind: 'refused', top, reason: problem } : { kind: 'found', layout };
}

/**
 * The common directory of a git directory: itself, or, for a linked worktree's directory
 * (`<common>/worktrees/<name>`), the repository that holds it. A `commondir` file anywhere else, or
 * one that names another directory, is how git would be sent to a config the model wrote.
 */
function commonDirOf(gitDir: string): string | { problem: string } {
  const file = path.join(gitDir, 'commondir');
  const kind = lstatKind(file);
  if (kind === undefined) return gitDir;
  if (kind !== 'file') return { problem: `${file} is not a plain file (git would follow it)` };
  const value = (readPointerFile(file) ?? '').replace(/[\r\n]+$/, '');
  const named = realOrUndefined(path.resolve(gitDir, value));
  const holder = path.dirname(gitDir);
  const own = path.basename(holder) === 'worktrees' ? realOrUndefined(path.dirname(holder)) : undefined;
  if (!named || !own || named !== own) {
    return {
      problem: `${file} points git at ${value || '(nothing)'}, not at the repository that holds ${gitDir}: a config there could make git run code, so git is not run on it`,
    };
  }
  return named;
}

/**
 * Why git must not run on a repository, or null. Its objects and refs are real directories inside
 * the common directory, and every alternate object directory lies inside it too.
 */
export function repositoryProblem(layout: RepositoryLayout): string | null {
  const objects = path.join(layout.commonDir, 'objects');
  if (lstatKind(objects) !== 'dir') return `${objects} is not a directory of the repository`;
  const refs = path.join(layout.commonDir, 'refs');
  const refsKind = lstatKind(refs);
  if (refsKind !== undefined && refsKind !== 'dir') return `${refs} is not a directory of the repository`;
  return alternatesProblem(objects, layout.commonDir, 0);
}

/** Why the alternates of an object directory are refused (one outside the repository), or null. */
function alternatesProblem(objects: string, commonDir: string, depth: number): string | null {
  const file = path.join(objects, 'info', 'alternates');
  const kind = lstatKind(file);
  if (kind === undefined) return null;
  if (kind !== 'file') return `${file} is not a plain file (git would follow it)`;
  const text = readPointerFile(file);
  if (text === undefined) return `${file} is larger than ${POINTER_FILE_MAX_BYTES} bytes`;
  for (const line of text.split('\n')) {
    const entry = line.replace(/\r$/, '');
    if (entry.trim() === '' || entry.startsWith('#')) continue;
    const target = entry.startsWith('"') ? undefined : realOrUndefined(path.resolve(objects, entry));
    if (!target || !isWithin(target, commonDir)) {
      return `${file} borrows objects from ${entry}, outside the repository ${commonDir}: git is not run on objects it does not own`;
    }
    if (depth + 1 >= MAX_ALTERNATE_DEPTH) return `${file} chains alternates deeper than git follows`;
    const nested = alternatesProblem(target, commonDir, depth + 1);
    if (nested) return nested;
  }
  return null;
}
