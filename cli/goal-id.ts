/**
 * Which goal a command means: a session id, a workflow id, a session name (/rename), the short id
 * every command prints (the end of the id's timestamp, which differs between goals of one directory;
 * cli/short-ids.ts), a
 * unique prefix of a session id (as git takes a short commit id), or `--last`, the newest goal of the
 * current directory. Goals that no worker has picked up yet have no store row; Temporal's list of
 * running goals fills that gap.
 */
import { ConfigError } from '../core/errors';
import { isShortIdShape, matchesShortId } from '../core/session-ids';
import { sessionIdOf, workflowIdOf } from '../core/workflow-names';
import { projectHash } from '../store/session-id';
import type { SessionRow, SessionStore } from '../store/types';
import type { CliContext } from './context';
import { shortIdsFor } from './short-ids';
import { type RunningGoal, runningGoals } from './worker-presence';

/** A prefix shorter than this is not looked up: it would match too much to be what was meant. */
export const MIN_ID_PREFIX = 4;

/** Candidates listed in an "ambiguous id" error. */
const AMBIGUOUS_LISTED = 10;

/** What a command was given to name a goal. */
export interface GoalRef {
  id?: string;
  last?: boolean;
}

/** The session id a command means. Throws ConfigError when there is none, or several. */
export async function resolveSessionId(context: CliContext, ref: GoalRef): Promise<string> {
  const given = ref.id?.trim();
  if (ref.last && given) throw new ConfigError('give a goal id or --last, not both');
  if (ref.last) return lastSessionId(context);
  if (!given)
    throw new ConfigError(
      'name a goal: give its short id (as `goalrun list` prints it), its name, its session id (or a unique prefix of it), or --last',
    );
  const sessionId = sessionIdOf(given);
  const store = await context.sessionStore();
  const row = await store.findSession(given);
  if (row) return row.id;
  if (await existsInTemporal(context, sessionId)) return sessionId;
  const named = await store.findSessionsByName(given, AMBIGUOUS_LISTED + 1);
  if (named.length === 1) return named[0].id;
  if (named.length > 1)
    throw await ambiguous(
      store,
      `the name "${given}"`,
      'names',
      named.map((each) => each.id),
    );
  if (sessionId.length < MIN_ID_PREFIX) {
    throw new ConfigError(
      `"${given}" is too short: give at least ${MIN_ID_PREFIX} characters of a session id, a session name, or the short id \`goalrun list\` prints`,
    );
  }
  const running = await temporalGoals(context);
  const rows = await store.findSessionsByPrefix(sessionId, AMBIGUOUS_LISTED + 1);
  const byShortId = isShortIdShape(sessionId)
    ? await store.findSessionsByShortId(sessionId, AMBIGUOUS_LISTED + 1)
    : [];
  const candidates = unique([
    ...rows.map((each) => each.id),
    ...byShortId.map((each) => each.id),
    ...running
      .filter((goal) => goal.sessionId.startsWith(sessionId) || matchesShortId(goal.sessionId, sessionId))
      .map((goal) => goal.sessionId),
  ]);
  if (candidates.length === 1) return candidates[0];
  if (candidates.length === 0) throw notFound(given);
  // Digits no id starts with are a short id that has grown since it was printed (issue 26 §10).
  const asShortId = candidates.every((id) => !id.startsWith(sessionId));
  throw await ambiguous(
    store,
    asShortId ? `the short id "${given}"` : `the id prefix "${given}"`,
    asShortId ? 'names' : 'starts',
    candidates,
  );
}

/** The error for an id or name that names several goals, listing (some of) them with their short ids. */
async function ambiguous(
  store: SessionStore,
  what: string,
  verb: string,
  candidates: string[],
): Promise<ConfigError> {
  const shown = candidates.slice(0, AMBIGUOUS_LISTED);
  const shortIds = await shortIdsFor(store, shown, candidates).catch(() => new Map<string, string>());
  const listed = shown.map((id) => {
    const short = shortIds.get(id);
    return short && short !== id ? `  ${short}  ${id}` : `  ${id}`;
  });
  const more = candidates.length > AMBIGUOUS_LISTED ? '\n  …' : '';
  return new ConfigError(
    `${what} is ambiguous; it ${verb} ${candidates.length > AMBIGUOUS_LISTED ? 'more than 10' : candidates.length} goals:\n${listed.join('\n')}${more}`,
  );
}

/** The newest goal whose workspace is the current directory (session ids start with its hash). */
async function lastSessionId(context: CliContext): Promise<string> {
  const cwd = process.cwd();
  const hash = projectHash(cwd);
  const store = await context.sessionStore();
  const row: SessionRow | null = await store.latestSessionOfProject(hash);
  const waiting = (await temporalGoals(context)).filter((goal) => goal.sessionId.startsWith(`${hash}-`));
  // Session ids end in a UTC timestamp, so within one project the greatest id is the newest.
  const newest = [row?.id, ...waiting.map((goal) => goal.sessionId)]
    .filter((id): id is string => id !== undefined)
    .sort()
    .at(-1);
  if (!newest)
    throw new ConfigError(`no goal has run in ${cwd} yet (--last looks for goals of this directory)`);
  return newest;
}

async function existsInTemporal(context: CliContext, sessionId: string): Promise<boolean> {
  const reader = await context.temporalReader();
  // Null when Temporal does not know it; other failures are real errors.
  return reader !== null && (await reader.describe(workflowIdOf(sessionId))) !== null;
}

/** Running goals of this store's queue, or none when Temporal is not there. */
async function temporalGoals(context: CliContext): Promise<RunningGoal[]> {
  const reader = await context.temporalReader();
  if (!reader) return [];
  return runningGoals(reader, await context.taskQueue()).catch(() => []);
}

function notFound(id: string): ConfigError {
  return new ConfigError(`no goal with session or workflow id "${id}", nor one of that name or short id`);
}

function unique(ids: string[]): string[] {
  return [...new Set(ids)];
}
