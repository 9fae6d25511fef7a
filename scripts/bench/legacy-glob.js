/**
 * The glob tool's matcher as it was before tinyglobby (issue 31), kept as the baseline that
 * test/tools/glob-compare.test.ts compares results with and scripts/bench-glob.js times. It is the
 * compiled code of activities/tools/glob-pattern.ts and walk.ts at that commit, plus the matching
 * loop of glob.ts; nothing in goalrun runs it.
 */
'use strict';
const { readdir } = require('node:fs/promises');
const path = require('node:path');
/**
 * Glob patterns as regular expressions over `/`-separated relative paths. Pure, so that the
 * matching rules can be tested without a file tree.
 *
 * Supported: `*` (any characters but `/`), `**` as a whole segment (any number of directories),
 * `?` (one character but `/`), `[abc]`, `[a-z]`, `[!abc]` / `[^abc]`, `{a,b}` (nestable) and `\`
 * to escape. Dotfiles are matched like any other name: agents need to see `.github` or `.env.example`.
 */
/** Upper bound on brace alternatives, so `{a,b}{c,d}...` cannot blow up into millions of patterns. */
const MAX_BRACE_EXPANSIONS = 1_024;
const MAGIC_CHARS = /[*?[{\\]/;
/** Removes `./` prefixes, duplicate and trailing slashes: `./src//a/` → `src/a`. */
function normalizeGlob(pattern) {
  let normalized = pattern.replace(/\/{2,}/g, '/');
  while (normalized.startsWith('./')) normalized = normalized.slice(2);
  if (normalized.length > 1 && normalized.endsWith('/')) normalized = normalized.slice(0, -1);
  return normalized;
}
/** Expands `{a,b}` alternatives, innermost last: `x{a,b{c,d}}` → `xa`, `xbc`, `xbd`. Unbalanced or comma-less braces stay literal. */
function expandBraces(pattern) {
  const results = [];
  const pending = [pattern];
  while (pending.length > 0) {
    const current = pending.pop();
    const group = findBraceGroup(current);
    if (!group) {
      results.push(current);
      continue;
    }
    if (results.length + pending.length + group.alternatives.length > MAX_BRACE_EXPANSIONS) {
      throw new Error(`glob pattern has too many {a,b} alternatives (more than ${MAX_BRACE_EXPANSIONS})`);
    }
    const prefix = current.slice(0, group.start);
    const suffix = current.slice(group.end + 1);
    // Pushed in reverse so alternatives come out in the order written.
    for (let index = group.alternatives.length - 1; index >= 0; index -= 1) {
      pending.push(prefix + group.alternatives[index] + suffix);
    }
  }
  return [...new Set(results)];
}
/** The first `{...}` group with a top-level comma, as its bounds and its alternatives. */
function findBraceGroup(pattern) {
  for (let start = 0; start < pattern.length; start += 1) {
    if (pattern[start] === '\\') {
      start += 1;
      continue;
    }
    if (pattern[start] !== '{') continue;
    let depth = 0;
    const commas = [];
    for (let index = start; index < pattern.length; index += 1) {
      const char = pattern[index];
      if (char === '\\') {
        index += 1;
      } else if (char === '{') {
        depth += 1;
      } else if (char === ',' && depth === 1) {
        commas.push(index);
      } else if (char === '}') {
        depth -= 1;
        if (depth === 0) {
          if (commas.length === 0) break;
          const bounds = [start, ...commas, index];
          const alternatives = bounds.slice(1).map((bound, i) => pattern.slice(bounds[i] + 1, bound));
          return { start, end: index, alternatives };
        }
      }
    }
  }
  return undefined;
}
function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
/** Converts one brace-free path segment (no `/`). */
function segmentToRegExp(segment) {
  let source = '';
  for (let index = 0; index < segment.length; index += 1) {
    const char = segment[index];
    if (char === '\\' && index + 1 < segment.length) {
      index += 1;
      source += escapeRegExp(segment[index]);
    } else if (char === '*') {
      while (segment[index + 1] === '*') index += 1;
      source += '[^/]*';
    } else if (char === '?') {
      source += '[^/]';
    } else if (char === '[') {
      const charClass = parseCharClass(segment, index);
      if (charClass) {
        source += charClass.source;
        index = charClass.end;
      } else {
        source += '\\[';
      }
    } else {
      source += escapeRegExp(char);
    }
  }
  return source;
}
/** `[abc]`, `[a-z]`, `[!abc]` starting at `start`; undefined when unclosed (then `[` is literal). */
function parseCharClass(segment, start) {
  let index = start + 1;
  const negated = segment[index] === '!' || segment[index] === '^';
  if (negated) index += 1;
  let body = '';
  // A `]` right after the opening bracket is a member, as in shell globs.
  for (let first = true; index < segment.length; index += 1, first = false) {
    const char = segment[index];
    if (char === ']' && !first) {
      if (body === '') return undefined;
      return { source: negated ? `[^/${body}]` : `[${body}]`, end: index };
    }
    if (char === '\\' && index + 1 < segment.length) {
      index += 1;
      body += `\\${segment[index]}`;
    } else {
      body += char.replace(/[\\\]^[]/, '\\$&');
    }
  }
  return undefined;
}
/** Converts one brace-free pattern; `**` segments match zero or more directories. */
function braceFreeToRegExp(pattern) {
  const segments = pattern
    .split('/')
    .filter((segment, index, all) => !(segment === '**' && all[index - 1] === '**'));
  let source = '';
  segments.forEach((segment, index) => {
    const isLast = index === segments.length - 1;
    const separator = index > 0 && segments[index - 1] !== '**' ? '/' : '';
    if (segment === '**') {
      if (isLast) source += index === 0 ? '.*' : '(?:/.*)?';
      else source += `${separator}(?:.*/)?`;
    } else {
      source += separator + segmentToRegExp(segment);
    }
  });
  return source;
}
/** The anchored regular expression that matches the relative paths a glob pattern names. */
function globToRegExp(pattern) {
  const alternatives = expandBraces(normalizeGlob(pattern)).map(braceFreeToRegExp);
  return new RegExp(`^(?:${alternatives.join('|')})$`);
}
/** The leading directories of a pattern that contain no glob syntax: where a walk can start. `src/**\/*.ts` → `src`. */
function globBaseDir(pattern) {
  const segments = normalizeGlob(pattern).split('/');
  const base = [];
  for (const segment of segments.slice(0, -1)) {
    if (MAGIC_CHARS.test(segment)) break;
    base.push(segment);
  }
  return base.join('/');
}
/** True when the pattern names `dirName` as a literal path segment, e.g. `node_modules/**` or `{src,.git}/*`. */
function globNamesDir(pattern, dirName) {
  let alternatives;
  try {
    alternatives = expandBraces(normalizeGlob(pattern));
  } catch {
    return false;
  }
  return alternatives.some((alternative) => alternative.split('/').includes(dirName));
}
/** Directories glob and grep skip unless asked for by name: huge, generated, rarely what is searched. */
const DEFAULT_SKIPPED_DIRS = ['.git', 'node_modules'];
/** The default skipped directories that a glob pattern does not name (those it names are searched). */
function skippedDirsFor(pattern) {
  return new Set(DEFAULT_SKIPPED_DIRS.filter((dir) => pattern === undefined || !globNamesDir(pattern, dir)));
}
/** How often a long walk reports liveness. */
const WALK_HEARTBEAT_INTERVAL_MS = 1_000;
/** Yields every non-directory entry under `root` (files and symlinks), depth first, in name order. */
async function* walkFiles(root, options = {}) {
  const skipDirs = options.skipDirs ?? new Set();
  let lastBeat = Date.now();
  const directories = [{ absolute: root, relative: '' }];
  while (directories.length > 0) {
    options.signal?.throwIfAborted();
    if (options.heartbeat && Date.now() - lastBeat >= WALK_HEARTBEAT_INTERVAL_MS) {
      lastBeat = Date.now();
      options.heartbeat();
    }
    const directory = directories.pop();
    let entries;
    try {
      entries = await readdir(directory.absolute, { withFileTypes: true });
    } catch {
      // Unreadable or vanished directories are skipped: a search should not fail on one of them.
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirectories = [];
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

/**
 * The relative paths (from `root`) of the files the old glob tool matched for `pattern`, sorted,
 * without its cap and without the workspace checks (the caller passes a real directory).
 */
async function legacyGlob(root, pattern) {
  const relativePattern = normalizeGlob(pattern);
  const matcher = globToRegExp(relativePattern);
  const base = globBaseDir(relativePattern);
  const walkRoot = path.join(root, base);
  const matches = [];
  for await (const file of walkFiles(walkRoot, { skipDirs: skippedDirsFor(relativePattern) })) {
    const relative = base === '' ? file.relative : `${base}/${file.relative}`;
    if (matcher.test(relative)) matches.push(relative);
  }
  return matches.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

module.exports = { legacyGlob, globToRegExp };
