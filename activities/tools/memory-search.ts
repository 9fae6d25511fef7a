/**
 * The `memory-search` tool (issue 17, F-MEMORY): full-text search over this project's earlier
 * sessions (messages, summaries, tool results, as stored, so redacted), packed into what is left of
 * the context. The current session is left out: its messages are already in context.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import {
  MEMORY_DEFAULT_LIMIT,
  MEMORY_MAX_LIMIT,
  memoryBudgetTokens,
  packByRank,
} from '../../core/memory-packing';
import { estimateTokens } from '../../core/tokens';
import { TOOL } from '../../core/tool-names';
import type { MemoryMatch } from '../../store/memory-search';
import { projectHash } from '../../store/session-id';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';

export const memorySearchArgs = z.object({
  query: z
    .string()
    .min(1)
    .describe(
      'Words to look for in earlier sessions of this project, e.g. `deploy script token`; "quoted phrase", -word, or.',
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MEMORY_MAX_LIMIT)
    .optional()
    .describe(`How many matches at most (default ${MEMORY_DEFAULT_LIMIT}).`),
});

/** Arguments of the memory-search tool. */
export type MemorySearchArgs = z.infer<typeof memorySearchArgs>;

/** The project hashes of a workspace: of its real path and of its path as given. */
export function workspaceProjectHashes(workspace: string): string[] {
  let real = workspace;
  try {
    real = fs.realpathSync(workspace);
  } catch {
    // A workspace that is gone: its path as given is all there is.
  }
  return [...new Set([projectHash(real), projectHash(path.resolve(workspace))])];
}

/** One match as the model reads it: where it is from, then the snippet. */
export function renderMatch(match: MemoryMatch): string {
  const name = match.sessionName ? `"${match.sessionName}" ` : '';
  const date = match.createdAt.toISOString().replace('T', ' ').slice(0, 16);
  return `[session ${name}${match.sessionId} · step ${match.step} · ${date} · ${match.role}] ${match.snippet}`;
}

async function runMemorySearch(args: MemorySearchArgs, context: ToolContext): Promise<ToolOutcome> {
  const store = context.store;
  const limit = args.limit ?? MEMORY_DEFAULT_LIMIT;
  const [matches, session, used] = await Promise.all([
    store.searchMemory({
      text: args.query,
      projectHashes: workspaceProjectHashes(context.workspace),
      excludeSessionId: context.sessionId,
      limit,
    }),
    store.getSession(context.sessionId),
    store.latestRequestTokens(context.sessionId),
  ]);
  if (matches.length === 0) {
    return {
      ok: true,
      output: `no earlier session of this project matches "${args.query}"`,
      changedWorkspace: false,
    };
  }
  const usable =
    (session?.goalState as { compaction?: { budget?: { usableInputTokens?: number } | null } } | null)
      ?.compaction?.budget?.usableInputTokens ?? null;
  const budget = memoryBudgetTokens(usable, used);
  const lines = matches.map((match) => ({ rank: match.rank, text: renderMatch(match) }));
  const packed = packByRank(
    lines.map((line) => ({ ...line, tokens: estimateTokens(line.text) + 1 })),
    budget,
  );
  const header =
    packed.length === matches.length
      ? `${matches.length} match${matches.length === 1 ? '' : 'es'} in earlier sessions, best first:`
      : `${packed.length} of ${matches.length} matches in earlier sessions, best first (what fits in the ${budget} tokens left for them):`;
  return {
    ok: true,
    output: [header, ...packed.map((line) => line.text)].join('\n'),
    changedWorkspace: false,
  };
}

export const memorySearchTool: ToolDefinition<MemorySearchArgs> = {
  name: TOOL.memorySearch,
  description:
    "Search this project's earlier goalrun sessions (their messages, summaries and tool results) by words. " +
    'Returns the best matches as snippets naming the session, step and date. Use it to recall what an earlier session found or decided.',
  schema: memorySearchArgs,
  summarize: (args) => `memory-search: ${args.query}`,
  run: runMemorySearch,
};
