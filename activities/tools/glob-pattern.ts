/**
 * Glob patterns of the glob and grep tools, read by picomatch (the matcher of tinyglobby, which
 * walks the tree for glob): `*` and `?` within a segment, `**` across directories, `{a,b}`, `[abc]`,
 * `[!abc]`, `\` to escape. Dotfiles are matched like any other name: agents need to see `.github`
 * or `.env.example`. Heavy generated folders are skipped unless the pattern names them.
 */
import picomatch from 'picomatch';

/**
 * Directories glob and grep skip unless the pattern names them: huge, generated or vendored, and
 * rarely what is searched (version control, dependencies, build output, virtualenvs, caches).
 */
export const DEFAULT_SKIPPED_DIRS: readonly string[] = [
  '.git',
  '.hg',
  '.svn',
  'node_modules',
  'bower_components',
  '.venv',
  'venv',
  '__pycache__',
  '.mypy_cache',
  '.pytest_cache',
  '.tox',
  'target',
  'dist',
  '.next',
  '.nuxt',
  '.gradle',
  '.terraform',
];

/** How picomatch reads our patterns: dotfiles match; `[!a]` negates; a leading `!` and `+(a|b)` are plain characters. */
const MATCH_OPTIONS: picomatch.PicomatchOptions = { dot: true, nonegate: true, noextglob: true, posix: true };

/** Removes `./` prefixes, duplicate and trailing slashes: `./src//a/` → `src/a`. */
export function normalizeGlob(pattern: string): string {
  let normalized = pattern.replace(/\/{2,}/g, '/');
  while (normalized.startsWith('./')) normalized = normalized.slice(2);
  if (normalized.length > 1 && normalized.endsWith('/')) normalized = normalized.slice(0, -1);
  return normalized;
}

/** The literal words of a pattern: its text split at `/` and at brace syntax. */
function literalParts(pattern: string): string[] {
  return normalizeGlob(pattern).split(/[/{},]/);
}

/** True when the pattern names `dirName` as a literal path segment, e.g. `node_modules/**` or `{src,.git}/*`. */
export function globNamesDir(pattern: string, dirName: string): boolean {
  return literalParts(pattern).includes(dirName);
}

/** The default skipped directories that a glob pattern does not name (those it names are searched). */
export function skippedDirsFor(pattern: string | undefined): Set<string> {
  return new Set(DEFAULT_SKIPPED_DIRS.filter((dir) => pattern === undefined || !globNamesDir(pattern, dir)));
}

/**
 * A pattern split where its glob syntax starts: `src/lib/**\/*.ts` → base `src/lib`, glob `**\/*.ts`.
 * The walk starts at the base, which the caller checks is inside the workspace. A `..` after the base
 * could climb out of it, so it is an error.
 */
export function splitGlob(pattern: string): { base: string; glob: string } {
  const normalized = normalizeGlob(pattern);
  const scanned = picomatch.scan(normalized, MATCH_OPTIONS);
  // An escape in the literal part (`a\*b/`) is glob syntax to picomatch, not a directory name.
  const literal = scanned.isGlob && !scanned.base.includes('\\');
  const split = literal ? { base: scanned.base, glob: scanned.glob } : { base: '', glob: normalized };
  if (!scanned.isGlob) {
    // No glob syntax at all: the last segment is the file, the rest the base.
    const slash = normalized.lastIndexOf('/');
    if (slash > 0) return checked({ base: normalized.slice(0, slash), glob: normalized.slice(slash + 1) });
  }
  return checked(split);
}

function checked(split: { base: string; glob: string }): { base: string; glob: string } {
  if (literalParts(split.glob).includes('..'))
    throw new Error('`..` is allowed only before the first wildcard; name the directory in path instead');
  return split;
}

/** The anchored regular expression for the relative paths a pattern matches (grep's filter). */
export function globMatcher(pattern: string): RegExp {
  return picomatch.makeRe(normalizeGlob(pattern), MATCH_OPTIONS);
}
