/** `goalrun sessions [--all] [--json]`: the project's sessions (every project's with --all), newest first. */
import type { CliContext } from '../context';
import { printJson, say } from '../output';
import { projectHashesOf, projectRealPath } from '../session-names';
import { sessionLine, summariesOf } from '../session-summary';

/** Sessions a list shows at most. */
export const SESSIONS_LISTED = 200;

export async function sessionsCommand(
  context: CliContext,
  options: { all?: boolean; json?: boolean },
): Promise<number> {
  const store = await context.sessionStore();
  const rows = await store.listProjectSessions(
    options.all ? null : projectHashesOf(process.cwd()),
    SESSIONS_LISTED,
  );
  const summaries = await summariesOf(store, rows);
  if (options.json) {
    printJson(summaries);
    return 0;
  }
  if (summaries.length === 0) {
    say(
      options.all
        ? 'no sessions yet'
        : `no sessions in ${projectRealPath(process.cwd())} yet (--all lists every project's)`,
    );
    return 0;
  }
  for (const summary of summaries)
    say(options.all ? `${sessionLine(summary)}  (${summary.projectDir})` : sessionLine(summary));
  return 0;
}
