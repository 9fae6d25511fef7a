/**
 * The `grep` tool: searches text files for a regular expression and lists matching lines as
 * `path:line: text`. The pattern runs in a child process (grep-search.ts), never in the worker.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import {
  GREP_DEFAULT_MAX_RESULTS,
  GREP_MAX_FILE_BYTES,
  GREP_MAX_LINE_CHARS,
  GREP_MAX_RESULTS,
  GREP_TIMEOUT_MS,
} from '../../core/limits';
import { cutAfter, cutBefore } from '../../core/text';
import { TOOL } from '../../core/tool-names';
import { findExecutable } from '../sandbox/host';
import { globMatcher, skippedDirsFor } from './glob-pattern';
import { type GrepQuery, searchWithNode, searchWithRipgrep } from './grep-search';
import { describeFsError, displayPath, resolveToolPath } from './paths';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';
import { resolveForRead } from './workspace-boundary';

/** How much of a clipped line is shown before the match, so the match itself stays visible. */
const CLIP_CONTEXT_BEFORE = 80;
const BYTES_PER_MIB = 1024 * 1024;
const MS_PER_SECOND = 1_000;
/** Matching lines counted before the search is stopped (the total is then "at least"). */
const GREP_COUNT_CAP = 100_000;

export const grepArgs = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('Regular expression, without slashes, e.g. `function\\s+\\w+` (ripgrep syntax).'),
  path: z
    .string()
    .optional()
    .describe('File or directory to search, relative to the workspace or absolute (default: the workspace).'),
  glob: z
    .string()
    .optional()
    .describe(
      'Only search files matching this glob, e.g. `*.ts` (matched against the file name when it has no `/`).',
    ),
  ignore_case: z.boolean().optional().describe('Match case-insensitively (default false).'),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(GREP_MAX_RESULTS)
    .optional()
    .describe(
      `Most matching lines to list (default ${GREP_DEFAULT_MAX_RESULTS}, at most ${GREP_MAX_RESULTS}).`,
    ),
});

/** Arguments of the grep tool. */
export type GrepArgs = z.infer<typeof grepArgs>;

/** Clips a long line to GREP_MAX_LINE_CHARS, keeping the match at `matchStart` in view. */
export function clipLine(line: string, matchStart: number): string {
  if (line.length <= GREP_MAX_LINE_CHARS) return line;
  const matchAt = Math.max(matchStart, 0);
  // Both ends fall between graphemes, so an emoji or accented letter at a cut is never split.
  const start = cutAfter(
    line,
    Math.max(0, Math.min(matchAt - CLIP_CONTEXT_BEFORE, line.length - GREP_MAX_LINE_CHARS)),
  );
  const end = cutBefore(line, start + GREP_MAX_LINE_CHARS);
  return `${start > 0 ? '…' : ''}${line.slice(start, end)}${end < line.length ? '…' : ''}`;
}

/** Knobs tests turn; the tool uses ripgrep from PATH and the limits from core/limits. */
export interface GrepRunOptions {
  /** Path of `rg`; null forces the Node fallback. */
  ripgrep?: string | null;
  timeoutMs?: number;
}

let ripgrepOnPath: string | null | undefined;

/** `rg` on the worker's PATH (looked up once). */
function defaultRipgrep(): string | null {
  ripgrepOnPath ??= findExecutable('rg');
  return ripgrepOnPath;
}

/** Runs a grep call; `options` exist for tests. */
export async function runGrep(
  args: GrepArgs,
  context: ToolContext,
  options: GrepRunOptions = {},
): Promise<ToolOutcome> {
  const fail = (output: string): ToolOutcome => ({ ok: false, output, changedWorkspace: false });
  let globFilter: RegExp | undefined;
  if (args.glob !== undefined) {
    try {
      globFilter = globMatcher(args.glob);
    } catch (error) {
      return fail(`invalid glob ${args.glob}: ${(error as Error).message}`);
    }
  }
  const resolved = await resolveForRead(context, args.path ?? '.');
  if (!resolved.ok) return fail(resolved.error);
  let targetIsFile: boolean;
  try {
    targetIsFile = !(await stat(resolved.real)).isDirectory();
  } catch (error) {
    return fail(describeFsError(error, resolved.shown));
  }
  const lexicalTarget = resolveToolPath(context.workspace, args.path ?? '.');

  const maxResults = args.max_results ?? GREP_DEFAULT_MAX_RESULTS;
  const query: GrepQuery = {
    pattern: args.pattern,
    ignoreCase: args.ignore_case ?? false,
    glob: args.glob,
    skipDirs: [...skippedDirsFor(args.glob)],
    target: resolved.real,
    targetIsFile,
    maxFileBytes: GREP_MAX_FILE_BYTES,
    maxResults,
    countCap: GREP_COUNT_CAP,
    timeoutMs: options.timeoutMs ?? GREP_TIMEOUT_MS,
    signal: context.signal,
    heartbeat: () => context.heartbeat({ tool: TOOL.grep }),
  };
  const ripgrep = options.ripgrep === undefined ? defaultRipgrep() : options.ripgrep;
  const result = ripgrep ? await searchWithRipgrep(ripgrep, query) : await searchWithNode(query, globFilter);
  if (result.error !== undefined && result.total === 0) {
    const reason = result.error
      .replace(/^Invalid regular expression: /, '')
      .split('\n')
      .map((line) => line.trim())
      // rg frames each engine's complaint with lines of `~`.
      .filter((line) => line !== '' && !/^~+$/.test(line))
      .join(' ');
    return fail(`invalid regular expression: ${reason}`);
  }

  const shownFile = (file: string) =>
    file === '' ? resolved.shown : displayPath(context.workspace, path.join(lexicalTarget, file));
  const lines = result.matches.map(
    (match) => `${shownFile(match.file)}:${match.line}: ${clipLine(match.text, match.matchStart)}`,
  );
  const notes: string[] = [];
  const total = result.capped ? `at least ${result.total}` : `${result.total}`;
  if (result.total > lines.length) {
    notes.push(
      `[${result.capped ? 'at least ' : ''}${result.total - lines.length} more matching lines not shown (${total} in all); ` +
        `narrow the pattern, path or glob, or raise max_results (at most ${GREP_MAX_RESULTS})]`,
    );
  }
  if (result.timedOut) {
    const seconds = query.timeoutMs / MS_PER_SECOND;
    notes.push(
      `[grep timed out after ${seconds} s and was stopped; results may be incomplete. ` +
        'Narrow the path or glob, or simplify the pattern (nested repetition like (a+)+ can take forever)]',
    );
  }
  const body = lines.length > 0 ? lines : [`no matches for /${args.pattern}/ in ${resolved.shown}`];
  return { ok: !result.timedOut, output: [...body, ...notes].join('\n'), changedWorkspace: false };
}

/** The `grep` tool. */
export const grepTool: ToolDefinition<GrepArgs> = {
  name: TOOL.grep,
  description: [
    'Searches file contents for a regular expression (ripgrep syntax: like JavaScript, with lookaround and',
    'backreferences) and lists matching lines as `path:line: text`.',
    'path may be a file or a directory (default: the workspace); glob filters files (`*.ts` matches file names,',
    'a pattern with `/` matches paths relative to path). Binary files and generated or vendored folders (.git, node_modules, dist, target, .venv, …) are skipped unless the glob names them,',
    `as are files over ${GREP_MAX_FILE_BYTES / BYTES_PER_MIB} MiB; lines over ${GREP_MAX_LINE_CHARS} characters are clipped.`,
    `Lists at most max_results lines (default ${GREP_DEFAULT_MAX_RESULTS}) and says how many more matched.`,
  ].join(' '),
  schema: grepArgs,
  summarize: (args) => `grep: ${args.pattern}${args.path ? ` in ${args.path}` : ''}`,
  run: (args, context) => runGrep(args, context),
};
