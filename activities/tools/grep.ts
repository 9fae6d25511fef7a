/**
 * The `grep` tool: searches text files for a JavaScript regular expression and lists matching
 * lines as `path:line: text`.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import {
  GREP_DEFAULT_MAX_RESULTS,
  GREP_MAX_FILE_BYTES,
  GREP_MAX_LINE_CHARS,
  GREP_MAX_RESULTS,
} from '../../core/limits';
import { globToRegExp } from './glob-pattern';
import { describeFsError, displayPath, resolveToolPath } from './paths';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';
import { skippedDirsFor, walkFiles } from './walk';

/** How much of a clipped line is shown before the match, so the match itself stays visible. */
const CLIP_CONTEXT_BEFORE = 80;
const BYTES_PER_MIB = 1024 * 1024;

export const grepArgs = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('JavaScript regular expression, without slashes, e.g. `function\\s+\\w+`.'),
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

/** Compiles the model's pattern; with the `u` flag when it allows (for `\p{...}`), else without. */
export function compileSearchPattern(pattern: string, ignoreCase: boolean): RegExp {
  const flags = ignoreCase ? 'i' : '';
  try {
    return new RegExp(pattern, `${flags}u`);
  } catch {
    return new RegExp(pattern, flags);
  }
}

/** Clips a long line to GREP_MAX_LINE_CHARS, keeping the first match in view. */
export function clipLine(line: string, matcher: RegExp): string {
  if (line.length <= GREP_MAX_LINE_CHARS) return line;
  const matchAt = Math.max(line.search(matcher), 0);
  const start = Math.max(0, Math.min(matchAt - CLIP_CONTEXT_BEFORE, line.length - GREP_MAX_LINE_CHARS));
  const end = start + GREP_MAX_LINE_CHARS;
  return `${start > 0 ? '…' : ''}${line.slice(start, end)}${end < line.length ? '…' : ''}`;
}

interface SearchState {
  matcher: RegExp;
  maxResults: number;
  results: string[];
  totalMatches: number;
  skippedLarge: number;
}

async function searchFile(absolute: string, shown: string, state: SearchState): Promise<void> {
  let content: Buffer;
  try {
    if ((await stat(absolute)).size > GREP_MAX_FILE_BYTES) {
      state.skippedLarge += 1;
      return;
    }
    content = await readFile(absolute);
  } catch {
    // Vanished files, broken symlinks and symlinks to directories are not search failures.
    return;
  }
  if (content.includes(0)) return;
  const lines = content.toString('utf8').split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index].endsWith('\r') ? lines[index].slice(0, -1) : lines[index];
    if (!state.matcher.test(line)) continue;
    state.totalMatches += 1;
    if (state.results.length < state.maxResults) {
      state.results.push(`${shown}:${index + 1}: ${clipLine(line, state.matcher)}`);
    }
  }
}

async function runGrep(args: GrepArgs, context: ToolContext): Promise<ToolOutcome> {
  const fail = (output: string): ToolOutcome => ({ ok: false, output, changedWorkspace: false });
  let matcher: RegExp;
  try {
    matcher = compileSearchPattern(args.pattern, args.ignore_case ?? false);
  } catch (error) {
    return fail(`invalid regular expression: ${(error as Error).message}`);
  }
  let fileFilter: ((relative: string) => boolean) | undefined;
  if (args.glob !== undefined) {
    let globMatcher: RegExp;
    try {
      globMatcher = globToRegExp(args.glob);
    } catch (error) {
      return fail(`invalid glob ${args.glob}: ${(error as Error).message}`);
    }
    const byName = !args.glob.includes('/');
    fileFilter = (relative) => globMatcher.test(byName ? path.posix.basename(relative) : relative);
  }

  const target = resolveToolPath(context.workspace, args.path ?? '.');
  const shownTarget = displayPath(context.workspace, target);
  let targetIsFile: boolean;
  try {
    targetIsFile = !(await stat(target)).isDirectory();
  } catch (error) {
    return fail(describeFsError(error, shownTarget));
  }

  const state: SearchState = {
    matcher,
    maxResults: args.max_results ?? GREP_DEFAULT_MAX_RESULTS,
    results: [],
    totalMatches: 0,
    skippedLarge: 0,
  };
  if (targetIsFile) {
    await searchFile(target, shownTarget, state);
  } else {
    const walk = walkFiles(target, {
      skipDirs: skippedDirsFor(args.glob),
      signal: context.signal,
      heartbeat: () => context.heartbeat({ matches: state.totalMatches }),
    });
    for await (const file of walk) {
      if (fileFilter && !fileFilter(file.relative)) continue;
      await searchFile(file.absolute, displayPath(context.workspace, file.absolute), state);
    }
  }

  const notes: string[] = [];
  if (state.totalMatches > state.results.length) {
    notes.push(
      `[${state.totalMatches - state.results.length} more matching lines not shown (${state.totalMatches} in all); ` +
        `narrow the pattern, path or glob, or raise max_results (at most ${GREP_MAX_RESULTS})]`,
    );
  }
  if (state.skippedLarge > 0) {
    notes.push(
      `[skipped ${state.skippedLarge} files larger than ${GREP_MAX_FILE_BYTES / BYTES_PER_MIB} MiB]`,
    );
  }
  const body =
    state.results.length > 0 ? state.results : [`no matches for /${args.pattern}/ in ${shownTarget}`];
  return { ok: true, output: [...body, ...notes].join('\n'), changedWorkspace: false };
}

/** The `grep` tool. */
export const grepTool: ToolDefinition<GrepArgs> = {
  name: 'grep',
  description: [
    'Searches file contents for a JavaScript regular expression and lists matching lines as `path:line: text`.',
    'path may be a file or a directory (default: the workspace); glob filters files (`*.ts` matches file names,',
    'a pattern with `/` matches paths relative to path). Binary files, .git and node_modules are skipped,',
    `as are files over ${GREP_MAX_FILE_BYTES / BYTES_PER_MIB} MiB; lines over ${GREP_MAX_LINE_CHARS} characters are clipped.`,
    `Lists at most max_results lines (default ${GREP_DEFAULT_MAX_RESULTS}) and says how many more matched.`,
  ].join(' '),
  schema: grepArgs,
  summarize: (args) => `grep: ${args.pattern}${args.path ? ` in ${args.path}` : ''}`,
  run: runGrep,
};
