/**
 * The parts of a git repository that make git run code: hooks, the repository's config (which can
 * name `core.fsmonitor`, `core.hooksPath`, filters, aliases) and the gitfile that says where the
 * repository is. A model that could write them would plant code the user's next `git commit` on the
 * host runs unsandboxed, so they are read-only in the sandbox and refused by the file tools, while
 * the rest of `.git` (objects, refs, index) stays writable for an ordinary `git add` / `git commit`.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** Submodule repositories below `.git/modules` are followed this deep (a submodule of a submodule). */
const MAX_MODULE_DEPTH = 3;
/** How long `git config --get core.hooksPath` may take. */
const GIT_CONFIG_TIMEOUT_MS = 5_000;

/** The protected paths of one writable root (absolute, real where they exist). */
export interface GitProtection {
  /** Directories and files mounted read-only over themselves. */
  readOnly: string[];
  /** Directories bound onto themselves read-write: a mount point cannot be renamed or removed (`mv .git x`). */
  pinned: string[];
  /** Hooks directories made when missing before the sandbox starts, so that the model cannot make them. */
  hookDirs: string[];
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

/** Hooks, config and per-worktree config of one git directory, and of its submodules'. */
function gitDirEntries(gitDir: string, depth: number): string[] {
  const entries = [
    path.join(gitDir, 'hooks'),
    path.join(gitDir, 'config'),
    path.join(gitDir, 'config.worktree'),
  ];
  if (depth >= MAX_MODULE_DEPTH) return entries;
  const modules = path.join(gitDir, 'modules');
  let names: string[] = [];
  try {
    names = readdirSync(modules);
  } catch {
    return entries;
  }
  for (const name of names) {
    const sub = path.join(modules, name);
    if (kindOf(sub) === 'dir') entries.push(...gitDirEntries(sub, depth + 1));
  }
  return entries;
}

/** `core.hooksPath` as git reads it for this work tree (includes followed); undefined when unset. */
function hooksPathOf(root: string): string | undefined {
  try {
    // `git config` reads configuration only; it runs no hook and no fsmonitor.
    const value = execFileSync('git', ['-C', root, 'config', '--get', 'core.hooksPath'], {
      encoding: 'utf8',
      timeout: GIT_CONFIG_TIMEOUT_MS,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    if (!value) return undefined;
    const home = process.env.HOME ?? '';
    const expanded = value.startsWith('~/') && home ? path.join(home, value.slice(2)) : value;
    return realOr(path.resolve(root, expanded));
  } catch {
    return undefined;
  }
}

/**
 * What to protect in a writable root (a real path). Paths are returned whether or not they exist:
 * the file tools refuse them either way, and {@link prepareGitProtection} makes a missing hooks
 * directory so that it can be mounted read-only (else the model could create it).
 */
export function gitProtectionOf(root: string): GitProtection {
  const all = [root, ...nestedRepositories(root)].map(repositoryProtection);
  return {
    readOnly: [...new Set(all.flatMap((one) => one.readOnly))],
    pinned: [...new Set(all.flatMap((one) => one.pinned))],
    hookDirs: [...new Set(all.flatMap((one) => one.hookDirs))],
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
function repositoryProtection(root: string): GitProtection {
  const dotGit = path.join(root, '.git');
  const gitDir = gitDirOf(dotGit);
  if (!gitDir) {
    const hooksPath = hooksPathOf(root);
    return { readOnly: hooksPath ? [hooksPath] : [], pinned: [], hookDirs: hooksPath ? [hooksPath] : [] };
  }
  const readOnly = new Set<string>();
  if (kindOf(dotGit) === 'file') readOnly.add(dotGit);
  for (const entry of gitDirEntries(gitDir, 0)) readOnly.add(entry);
  const common = commonDirOf(gitDir);
  if (common !== gitDir) for (const entry of gitDirEntries(common, 0)) readOnly.add(entry);
  const hookDirs = [path.join(common, 'hooks')];
  const hooksPath = hooksPathOf(root);
  if (hooksPath) {
    readOnly.add(hooksPath);
    hookDirs.push(hooksPath);
  }
  const pinned = kindOf(dotGit) === 'dir' ? [gitDir] : [];
  // A symlinked .git is not pinned (a symlink cannot be a mount point); docs/sandbox.md lists it as not covered.
  return { readOnly: [...readOnly].map(realOr), pinned, hookDirs };
}

/** True when `file` (a real path) is a protected path of `protection` or lies below one. */
export function isGitProtected(file: string, protection: GitProtection): boolean {
  return protection.readOnly.some((entry) => file === entry || file.startsWith(`${entry}/`));
}

/** The refusal of a file tool's write to a protected path. */
export function gitProtectedError(toolName: string, shown: string): string {
  return `protected git path: ${toolName} cannot write ${shown}; git hooks, git config and the .git file run code outside the sandbox on the next git command, so they are read-only (ask for an escalated command with --approval on-request if a hook really must change)`;
}

/**
 * The protected paths to mount, for the writable roots of one sandbox: missing hooks directories
 * are created first, so that the model cannot create them inside; only what exists is returned
 * (bwrap can bind only existing paths).
 */
export function prepareGitProtection(roots: readonly string[]): Omit<GitProtection, 'hookDirs'> {
  const readOnly: string[] = [];
  const pinned: string[] = [];
  for (const root of roots) {
    const protection = gitProtectionOf(root);
    for (const dir of protection.hookDirs) {
      if (kindOf(dir) !== undefined) continue;
      try {
        mkdirSync(dir, { recursive: true });
      } catch {
        // a parent is read-only or not a directory: the sandbox cannot create it either
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
