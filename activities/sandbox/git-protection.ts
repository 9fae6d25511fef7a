/**
 * The parts of a git repository that make git run code or say where the repository is: hooks, the
 * repository's config (which can name `core.fsmonitor`, `core.hooksPath`, filters, aliases), the
 * gitfile, `commondir`, `info/`, `objects/info/alternates` and the pointer files of every linked
 * worktree. A model that could write them would plant code the user's next `git commit` on the host
 * runs unsandboxed (or send git to a config it wrote), so they are read-only in the sandbox and
 * refused by the file tools, while the rest of `.git` (objects, refs, index) stays writable for an
 * ordinary `git add` / `git commit`.
 *
 * A path that does not exist cannot be mounted read-only without bubblewrap making it: the hooks and
 * `info/` directories and an empty `alternates` file (all of which git itself makes, and reads the
 * same empty) are made before the sandbox starts. A main repository's `commondir` cannot be made so
 * (git fails on an empty one); the file tools refuse it, and goalrun's own git refuses a repository
 * whose `commondir` leads elsewhere (activities/git/repository-layout.ts).
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readGitConfig } from '../git/safe-git';

/** Submodule repositories below `.git/modules` are followed this deep (a submodule of a submodule). */
const MAX_MODULE_DEPTH = 3;

/** The protected paths of one writable root (absolute, real where they exist). */
export interface GitProtection {
  /** Directories and files mounted read-only over themselves. */
  readOnly: string[];
  /** Directories bound onto themselves read-write: a mount point cannot be renamed or removed (`mv .git x`). */
  pinned: string[];
  /** Directories (hooks, info) made when missing before the sandbox starts, so that the model cannot make them. */
  makeDirs: string[];
  /** Files made empty when missing before the sandbox starts (`objects/info/alternates`). */
  makeFiles: string[];
}

function kindOf(file: string): 'dir' | 'file' | 'link' | undefined {
  try {
    const stat = lstatSync(file);
    if (stat.isSymbolicLink()) return 'link';
    return stat.isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

function realOr(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** The git directory a `.git` entry names: itself, or the `gitdir:` of a gitfile (worktrees, submodules). */
function gitDirOf(dotGit: string): string | undefined {
  const kind = kindOf(dotGit);
  if (kind === 'dir' || (kind === 'link' && kindOf(realOr(dotGit)) === 'dir')) return realOr(dotGit);
  if (kind !== 'file') return undefined;
  try {
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'));
    if (!match) return undefined;
    return realOr(path.resolve(path.dirname(dotGit), match[1]));
  } catch {
    return undefined;
  }
}

/** The common directory of a linked worktree's gitdir (where hooks and config live), else the gitdir. */
function commonDirOf(gitDir: string): string {
  try {
    const relative = readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim();
    return relative ? realOr(path.resolve(gitDir, relative)) : gitDir;
  } catch {
    return gitDir;
  }
}

/**
 * What runs code or points elsewhere in one git directory: hooks, config, per-worktree config,
 * `commondir`, `info/`, the alternates, the pointer files of its linked worktrees; and the same of
 * its submodules' directories.
 */
function gitDirEntries(gitDir: string, depth: number): string[] {
  const entries = [
    path.join(gitDir, 'hooks'),
    path.join(gitDir, 'config'),
    path.join(gitDir, 'config.worktree'),
    path.join(gitDir, 'commondir'),
    path.join(gitDir, 'info'),
    path.join(gitDir, 'objects', 'info', 'alternates'),
    ...worktreePointers(gitDir),
  ];
  if (depth >= MAX_MODULE_DEPTH) return entries;
  for (const sub of subdirectories(path.join(gitDir, 'modules')))
    entries.push(...gitDirEntries(sub, depth + 1));
  return entries;
}

/** The directories inside a directory (none when it is missing). */
function subdirectories(dir: string): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.map((name) => path.join(dir, name)).filter((sub) => kindOf(sub) === 'dir');
}

/**
 * The files of each linked worktree's directory (`worktrees/<name>`) that say where its repository
 * and its work tree are: rewritten, they would send the user's next git in that worktree to a config
 * the model wrote. The rest of those directories (index, HEAD) stays writable for commits made there.
 */
function worktreePointers(gitDir: string): string[] {
  return subdirectories(path.join(gitDir, 'worktrees')).flatMap((dir) => [
    path.join(dir, 'commondir'),
    path.join(dir, 'gitdir'),
    path.join(dir, 'config.worktree'),
  ]);
}

/** `core.hooksPath` as git reads it for this work tree (includes followed); undefined when unset. */
async function hooksPathOf(root: string): Promise<string | undefined> {
  const value = await readGitConfig(root, 'core.hooksPath');
  if (!value) return undefined;
  const home = process.env.HOME ?? '';
  const expanded = value.startsWith('~/') && home ? path.join(home, value.slice(2)) : value;
  return realOr(path.resolve(root, expanded));
}

/**
 * What to protect in a writable root (a real path). Paths are returned whether or not they exist:
 * the file tools refuse them either way, and {@link prepareGitProtection} makes a missing hooks
 * directory so that it can be mounted read-only (else the model could create it).
 */
export async function gitProtectionOf(root: string): Promise<GitProtection> {
  const all = await Promise.all([root, ...nestedRepositories(root)].map(repositoryProtection));
  return {
    readOnly: [...new Set(all.flatMap((one) => one.readOnly))],
    pinned: [...new Set(all.flatMap((one) => one.pinned))],
    makeDirs: [...new Set(all.flatMap((one) => one.makeDirs))],
    makeFiles: [...new Set(all.flatMap((one) => one.makeFiles))],
  };
}

/** Directories right below a root that hold a repository of their own (a folder of checkouts). */
function nestedRepositories(root: string): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names
    .filter((name) => name !== '.git')
    .map((name) => path.join(root, name))
    .filter((dir) => kindOf(dir) === 'dir' && kindOf(path.join(dir, '.git')) !== undefined);
}

/** The protected paths of the repository whose work tree is `root`. */
async function repositoryProtection(root: string): Promise<GitProtection> {
  const dotGit = path.join(root, '.git');
  const gitDir = gitDirOf(dotGit);
  if (!gitDir) {
    const hooksPath = await hooksPathOf(root);
    return {
      readOnly: hooksPath ? [hooksPath] : [],
      pinned: [],
      makeDirs: hooksPath ? [hooksPath] : [],
      makeFiles: [],
    };
  }
  const readOnly = new Set<string>();
  if (kindOf(dotGit) === 'file') readOnly.add(dotGit);
  for (const entry of gitDirEntries(gitDir, 0)) readOnly.add(entry);
  const common = commonDirOf(gitDir);
  if (common !== gitDir) for (const entry of gitDirEntries(common, 0)) readOnly.add(entry);
  const makeDirs = [
    path.join(common, 'hooks'),
    path.join(common, 'info'),
    path.join(common, 'objects', 'info'),
  ];
  const hooksPath = await hooksPathOf(root);
  if (hooksPath) {
    readOnly.add(hooksPath);
    makeDirs.push(hooksPath);
  }
  const pinned = kindOf(dotGit) === 'dir' ? [gitDir] : [];
  // An empty alternates file is what git reads when there is none; made, it can be mounted read-only.
  const makeFiles = [path.join(common, 'objects', 'info', 'alternates')];
  // A symlinked .git is not pinned (a symlink cannot be a mount point); docs/sandbox.md lists it as not covered.
  return { readOnly: [...readOnly].map(realOr), pinned, makeDirs, makeFiles };
}

/** True when `file` (a real path) is a protected path of `protection` or lies below one. */
export function isGitProtected(file: string, protection: GitProtection): boolean {
  return protection.readOnly.some((entry) => file === entry || file.startsWith(`${entry}/`));
}

/** The refusal of a file tool's write to a protected path. */
export function gitProtectedError(toolName: string, shown: string): string {
  return `protected git path: ${toolName} cannot write ${shown}; git hooks, git config and the files that say where the repository is (.git, commondir, info/, objects/info/alternates) make the next git command run code outside the sandbox, so they are read-only (ask for an escalated command with --approval on-request if one really must change)`;
}

/**
 * The protected paths to mount, for the writable roots of one sandbox: missing hooks and info
 * directories and a missing alternates file are made first, so that the model cannot make them
 * inside; only what exists is returned (bwrap can bind only existing paths).
 */
export async function prepareGitProtection(
  roots: readonly string[],
): Promise<Omit<GitProtection, 'makeDirs' | 'makeFiles'>> {
  const readOnly: string[] = [];
  const pinned: string[] = [];
  for (const root of roots) {
    const protection = await gitProtectionOf(root);
    for (const dir of protection.makeDirs) {
      if (kindOf(dir) !== undefined) continue;
      try {
        mkdirSync(dir, { recursive: true });
      } catch {
        // a parent is read-only or not a directory: the sandbox cannot create it either
      }
    }
    for (const file of protection.makeFiles) {
      // Only in a real directory: a parent the model swapped for a symlink is not followed.
      if (kindOf(file) !== undefined || kindOf(path.dirname(file)) !== 'dir') continue;
      try {
        writeFileSync(file, '', { flag: 'wx' });
      } catch {
        // made meanwhile, or a read-only parent
      }
    }
    for (const entry of protection.readOnly) {
      const kind = kindOf(realOr(entry));
      if (kind === 'dir' || kind === 'file') readOnly.push(realOr(entry));
    }
    pinned.push(...protection.pinned);
  }
  return { readOnly: [...new Set(readOnly)], pinned: [...new Set(pinned)] };
}
