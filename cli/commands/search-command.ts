/** `goalrun search "text" [--all] [--json]`: the memory search of the model's memory-search tool, from the CLI. */
import { ConfigError } from '../../core/errors';
import { MEMORY_MAX_LIMIT } from '../../core/memory-packing';
import type { CliContext } from '../context';
import { printJson, say } from '../output';
import { projectHashesOf, projectRealPath } from '../session-names';

/** Matches shown when --limit is not given. */
export const SEARCH_DEFAULT_LIMIT = 20;

export async function searchCommand(
  context: CliContext,
  text: string,
  options: { all?: boolean; json?: boolean; limit?: string },
): Promise<number> {
  const query = text.trim();
  if (!query) throw new ConfigError('give the words to search for');
  const limit = options.limit === undefined ? SEARCH_DEFAULT_LIMIT : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MEMORY_MAX_LIMIT)
    throw new ConfigError(
      `--limit must be a whole number from 1 to ${MEMORY_MAX_LIMIT}, got "${options.limit}"`,
    );
  const store = await context.sessionStore();
  const matches = await store.searchMemory({
    text: query,
    projectHashes: options.all ? null : projectHashesOf(process.cwd()),
    limit,
  });
  if (options.json) {
    printJson(matches.map((match) => ({ ...match, createdAt: match.createdAt.toISOString() })));
    return 0;
  }
  if (matches.length === 0) {
    say(
      `nothing matches "${query}" in ${options.all ? 'any session' : `the sessions of ${projectRealPath(process.cwd())} (--all searches every project)`}`,
    );
    return 0;
  }
  for (const match of matches) {
    const name = match.sessionName ? `${match.sessionName} ` : '';
    const date = match.createdAt.toISOString().replace('T', ' ').slice(0, 16);
    say(`${name}${match.sessionId} · step ${match.step} · ${date} · ${match.role}`);
    say(`  ${match.snippet}`);
  }
  return 0;
}
