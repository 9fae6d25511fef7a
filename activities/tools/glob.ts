/**
 * The `glob` tool: lists files whose path matches a glob pattern, sorted, capped.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { GLOB_MAX_RESULTS } from '../../core/limits';
import { TOOL } from '../../core/tool-names';
import { globBaseDir, globToRegExp, normalizeGlob } from './glob-pattern';
import { displayPath, resolveToolPath } from './paths';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';
import { skippedDirsFor, walkFiles } from './walk';
import { resolveForRead } from './workspace-boundary';

export const globArgs = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('Glob pattern relative to path, e.g. `**/*.ts`, `src/**/test_?.{js,ts}`, `docs/[a-c]*.md`.'),
  path: z
    .string()
    .optional()
    .describe(
      'Directory to search, relative to the workspace or absolute inside it (default: the workspace).',
    ),
});

/** Arguments of the glob tool. */
export type GlobArgs = z.infer<typeof globArgs>;

async function runGlob(args: GlobArgs, context: ToolContext): Promise<ToolOutcome> {
  const fail = (output: string): ToolOutcome => ({ ok: false, output, changedWorkspace: false });
  const pattern = normalizeGlob(args.pattern);
  // An absolute pattern carries its own root; `path` then does not apply.
  const absolute = path.isAbsolute(pattern);
  const relativePattern = absolute ? pattern.slice(1) : pattern;

  let matcher: RegExp;
  try {
    matcher = globToRegExp(relativePattern);
  } catch (error) {
    return fail(`invalid glob pattern ${args.pattern}: ${(error as Error).message}`);
  }
  const root = absolute ? '/' : resolveToolPath(context.workspace, args.path ?? '.');
  const shownRoot = displayPath(context.workspace, root);
  if (!absolute) {
    const checked = await resolveForRead(context, root);
    if (!checked.ok) return fail(checked.error);
    if (!(await stat(checked.real)).isDirectory())
      return fail(`${shownRoot} is not a directory; path must name a directory`);
  }

  // Walking only below the pattern's literal prefix keeps `src/**` from visiting the whole tree.
  const base = globBaseDir(relativePattern);
  const walkRoot = path.join(root, base);
  // The directory walked must itself be inside the workspace (a literal prefix can be a symlink).
  const walkable = await resolveForRead(context, walkRoot);
  if (!walkable.ok) {
    if (walkable.error.startsWith('outside the workspace')) return fail(walkable.error);
    return { ok: true, output: `no files match ${args.pattern} in ${shownRoot}`, changedWorkspace: false };
  }
  const matches: string[] = [];
  const walk = walkFiles(walkable.real, {
    skipDirs: skippedDirsFor(relativePattern),
    signal: context.signal,
    heartbeat: () => context.heartbeat({ matches: matches.length }),
  });
  for await (const file of walk) {
    const relative = base === '' ? file.relative : `${base}/${file.relative}`;
    if (matcher.test(relative))
      matches.push(displayPath(context.workspace, path.join(walkRoot, file.relative)));
  }

  if (matches.length === 0)
    return { ok: true, output: `no files match ${args.pattern} in ${shownRoot}`, changedWorkspace: false };
  matches.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const shown = matches.slice(0, GLOB_MAX_RESULTS);
  let output = shown.join('\n');
  if (matches.length > shown.length) {
    output += `\n[${matches.length - shown.length} more matches not shown (${matches.length} in all); narrow the pattern or path]`;
  }
  return { ok: true, output, changedWorkspace: false };
}

/** The `glob` tool. */
export const globTool: ToolDefinition<GlobArgs> = {
  name: TOOL.glob,
  description: [
    'Lists files whose path (relative to path, default the workspace) matches a glob pattern, sorted by path.',
    'Syntax: `*` and `?` within one path segment, `**` for any number of directories, `{a,b}` alternatives,',
    '`[abc]` / `[!abc]` character classes. `*.ts` matches only at the top level; use `**/*.ts` to recurse.',
    `.git and node_modules are skipped unless the pattern names them. At most ${GLOB_MAX_RESULTS} paths are listed.`,
  ].join(' '),
  schema: globArgs,
  summarize: (args) => `glob: ${args.pattern}${args.path ? ` in ${args.path}` : ''}`,
  run: runGlob,
};
