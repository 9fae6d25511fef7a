/**
 * Which session `resume` means (issue 17): an id, a prefix, --last or a name (get only: a missing
 * name is an error listing the nearest ones). Without any, the project's recent sessions are offered
 * in a picker on a terminal, or listed in the error without one. A prefix or name reaches only this
 * project's sessions; another project's session is resumed by its full or short id, with a one-line note.
 */
import { ConfigError } from '../core/errors';
import { matchesShortId } from '../core/session-ids';
import type { SessionRow, SessionStore } from '../store/types';
import type { CliContext } from './context';
import { resolveSessionId } from './goal-id';
import { notice } from './output';
import { findSessionByName, projectHashesOf, unknownNameError } from './session-names';
import { describeSessionLine, pickSession } from './session-picker';
import { shortIdsFor } from './short-ids';

/** Sessions the picker (or the no-terminal error) offers. */
export const RESUMABLE_LISTED = 10;

/** The session id `resume` should act on. */
export async function sessionToResume(
  context: CliContext,
  id: string | undefined,
  last: boolean | undefined,
): Promise<string> {
  const given = id?.trim();
  if (last || given) {
    if (given && !last) {
      const named = await findSessionByName(context, given);
      if (named) return named.id;
    }
    let sessionId: string;
    try {
      sessionId = await resolveSessionId(context, { id: given, last });
    } catch (err) {
      if (given && err instanceof ConfigError && err.message.startsWith('no goal with'))
        throw await unknownNameError(context, given);
      throw err;
    }
    if (given) await checkScope(context, sessionId, given);
    return sessionId;
  }
  const store = await context.sessionStore();
  const rows = (await store.listProjectSessions(projectHashesOf(process.cwd()), RESUMABLE_LISTED * 2))
    .filter((row) => !row.cleanedAt)
    .slice(0, RESUMABLE_LISTED);
  if (rows.length === 0)
    throw new ConfigError(
      `no session has run in ${process.cwd()} yet; name one: goalrun resume <id or name>`,
    );
  if (!process.stdin.isTTY || !process.stderr.isTTY) throw await listError(store, rows);
  const picked = await pickSession(store, rows);
  if (!picked) throw new ConfigError('no session picked');
  return picked.id;
}

/** A session of another project: allowed by its full or short id (with a note), refused by a prefix or name. */
async function checkScope(context: CliContext, sessionId: string, given: string): Promise<void> {
  const store = await context.sessionStore();
  const row = await store.getSession(sessionId);
  if (!row || projectHashesOf(process.cwd()).includes(row.projectHash)) return;
  // A short id is printed for one goal of the whole store, as the full id is (issue 26 §10).
  if (given === sessionId || given === row.workflowId || matchesShortId(sessionId, given)) {
    notice(`note: session ${sessionId} belongs to another project (${row.projectDir}); resuming it there`);
    return;
  }
  throw new ConfigError(
    `"${given}" is session ${sessionId} of another project (${row.projectDir}); resume it by its full or short id`,
  );
}

async function listError(store: SessionStore, rows: SessionRow[]): Promise<ConfigError> {
  const shortIds = await shortIdsFor(
    store,
    rows.map((row) => row.id),
  );
  const lines = rows.map((row, index) => `  ${index + 1}. ${describeSessionLine(row, shortIds.get(row.id))}`);
  return new ConfigError(
    `name the session to resume (no terminal to pick one on): goalrun resume <id or name>\n${lines.join('\n')}`,
  );
}
