/**
 * The short ids the CLI prints (issue 26 §10): one form in `list`, `sessions`, the run and start
 * header and `status`, each unique among the store's goals (the rule is core/session-ids.ts).
 */
import { shortIdAmong } from '../core/session-ids';
import type { SessionStore } from '../store/types';
import type { CliContext } from './context';

/**
 * The short id of each of `ids`, told apart from every stored id and from `alsoKnown` (goals Temporal
 * runs that have no row yet).
 */
export async function shortIdsFor(
  store: SessionStore,
  ids: string[],
  alsoKnown: string[] = [],
): Promise<Map<string, string>> {
  const everyId = [...new Set([...(await store.sessionIdsSharingEnds(ids)), ...ids, ...alsoKnown])];
  return new Map(ids.map((id) => [id, shortIdAmong(id, everyId)]));
}

/** The short id of one session of this store. */
export async function shortIdFor(context: CliContext, sessionId: string): Promise<string> {
  const store = await context.sessionStore();
  return (await shortIdsFor(store, [sessionId])).get(sessionId) ?? sessionId;
}
