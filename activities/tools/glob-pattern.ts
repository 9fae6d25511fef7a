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
export function normalizeGlob(pattern: string): string {
  let normalized = pattern.replace(/\/{2,}/g, '/');
  while (normalized.startsWith('./')) normalized = normalized.slice(2);
  if (normalized.length > 1 && normalized.endsWith('/')) normalized = normalized.slice(0, -1);
  return normalized;
}

/** Expands `{a,b}` alternatives, innermost last: `x{a,b{c,d}}` → `xa`, `xbc`, `xbd`. Unbalanced or comma-less braces stay literal. */
export function expandBraces(pattern: string): string[] {
  const results: string[] = [];
  const pending = [pattern];
  while (pending.length > 0) {
    const current = pending.pop()!;
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
function findBraceGroup(pattern: string): { start: number; end: number; alternatives: string[] } | undefined {
  for (let start = 0; start < pattern.length; start += 1) {
    if (pattern[start] === '\\') {
      start += 1;
      continue;
    }
    if (pattern[start] !== '{') continue;
    let depth = 0;
    const commas: number[] = [];
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

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Converts one brace-free path segment (no `/`). */
function segmentToRegExp(segment: string): string {
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
function parseCharClass(segment: string, start: number): { source: string; end: number } | undefined {
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
function braceFreeToRegExp(pattern: string): string {
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
export function globToRegExp(pattern: string): RegExp {
  const alternatives = expandBraces(normalizeGlob(pattern)).map(braceFreeToRegExp);
  return new RegExp(`^(?:${alternatives.join('|')})$`);
}

/** The leading directories of a pattern that contain no glob syntax: where a walk can start. `src/**\/*.ts` → `src`. */
export function globBaseDir(pattern: string): string {
  const segments = normalizeGlob(pattern).split('/');
  const base: string[] = [];
  for (const segment of segments.slice(0, -1)) {
    if (MAGIC_CHARS.test(segment)) break;
    base.push(segment);
  }
  return base.join('/');
}

/** True when the pattern names `dirName` as a literal path segment, e.g. `node_modules/**` or `{src,.git}/*`. */
export function globNamesDir(pattern: string, dirName: string): boolean {
  let alternatives: string[];
  try {
    alternatives = expandBraces(normalizeGlob(pattern));
  } catch {
    return false;
  }
  return alternatives.some((alternative) => alternative.split('/').includes(dirName));
}
