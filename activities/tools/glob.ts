/**
 * The `glob` tool: lists files whose path matches a glob pattern, sorted, capped.
 */
import fs, { type Dirent } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import { GLOB_MAX_RESULTS } from '../../core/limits';
import { TOOL } from '../../core/tool-names';
import { DEFAULT_SKIPPED_DIRS, normalizeGlob, skippedDirsFor, splitGlob } from './glob-pattern';
import { displayPath, resolveToolPath } from './paths';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';
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

/** How often a long walk reports liveness. */
const GLOB_HEARTBEAT_INTERVAL_MS = 1_000;

/** A symlink as the walk sees it: an entry to list, never a directory to enter. */
function asPlainEntry(entry: Dirent): Dirent {
  if (!entry.isSymbolicLink()) return entry;
  return Object.assign(Object.create(entry) as Dirent, {
    isFile: () => true,
    isDirectory: () => false,
    isSymbolicLink: () => false,
  });
}

/**
 * The file system tinyglobby reads through. tinyglobby either follows symlinks (they can leave the
 * workspace or loop) or leaves them out; the model should see them listed, as `ls` shows them, and
 * the walk never enter them. Reported as plain files, they are both.
 */
const SYMLINKS_AS_ENTRIES = {
  ...fs,
  readdir: (
    dir: string,
    options: { withFileTypes: true },
    done: (error: Error | null, entries?: Dirent[]) => void,
  ) => fs.readdir(dir, options, (error, entries) => done(error, entries?.map(asPlainEntry))),
  readdirSync: (dir: string, options: { withFileTypes: true }) =>
    fs.readdirSync(dir, options).map(asPlainEntry),
};

async function runGlob(args: GlobArgs, context: ToolContext): Promise<ToolOutcome> {
  const fail = (output: string): ToolOutcome => ({ ok: false, output, changedWorkspace: false });
  const pattern = normalizeGlob(args.pattern);
  // An absolute pattern carries its own root; `path` then does not apply.
  const absolute = path.isAbsolute(pattern);
  const relativePattern = absolute ? pattern.slice(1) : pattern;

  let split: { base: string; glob: string };
  try {
    split = splitGlob(relativePattern);
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
  const { base } = split;
  const walkRoot = path.join(root, base);
  // The directory walked must itself be inside the workspace (a literal prefix can be a symlink);
  // the walk starts at its real path and never follows a symlink below it.
  const walkable = await resolveForRead(context, walkRoot);
  if (!walkable.ok) {
    if (walkable.error.startsWith('outside the workspace')) return fail(walkable.error);
    return { ok: true, output: `no files match ${args.pattern} in ${shownRoot}`, changedWorkspace: false };
  }
  if (!(await stat(walkable.real)).isDirectory())
    return { ok: true, output: `no files match ${args.pattern} in ${shownRoot}`, changedWorkspace: false };
  const beat = setInterval(() => {
    try {
      context.heartbeat({ tool: TOOL.glob });
    } catch {
      // Temporal notices missing heartbeats by itself.
    }
  }, GLOB_HEARTBEAT_INTERVAL_MS);
  let found: string[];
  try {
    found = await glob(
      // A leading `!` would be a negation to tinyglobby; here it is a character of a name.
      split.glob.startsWith('!') ? `\\${split.glob}` : split.glob,
      {
        cwd: walkable.real,
        dot: true,
        followSymbolicLinks: false,
        onlyFiles: true,
        expandDirectories: false,
        extglob: false,
        ignore: [...skippedDirsFor(relativePattern)].map((dir) => `**/${dir}/**`),
        signal: context.signal,
        fs: SYMLINKS_AS_ENTRIES as never,
      },
    );
  } finally {
    clearInterval(beat);
  }
  context.signal.throwIfAborted();
  const shownBase = displayPath(context.workspace, walkRoot);
  const matches = shownBase === '.' ? found : found.map((relative) => `${shownBase}/${relative}`);

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
    `Generated and vendored folders (${DEFAULT_SKIPPED_DIRS.join(', ')}) are skipped unless the pattern names them;`,
    `symlinks are listed, never followed. At most ${GLOB_MAX_RESULTS} paths are listed.`,
  ].join(' '),
  schema: globArgs,
  summarize: (args) => `glob: ${args.pattern}${args.path ? ` in ${args.path}` : ''}`,
  run: runGlob,
};
