/**
 * The shape of session ids (spec S-STORE): `<project hash>-<UTC timestamp>`. Pure, so the workflow
 * can name the fresh session of a /clear; the hash itself is computed in store/session-id.ts.
 */

/** `2026-11-30T15:21:51.123Z` → `20261130T152151123Z`: sorts like the time and is safe in ids and file names. */
export function compactTimestamp(now: Date): string {
  return now.toISOString().replace(/[-:.]/g, '');
}

/** A session id from a project hash and a time. */
export function sessionIdWith(projectHash: string, now: Date): string {
  return `${projectHash}-${compactTimestamp(now)}`;
}

/** The project hash of a session id (everything before the first `-`). */
export function projectHashOf(sessionId: string): string {
  const dash = sessionId.indexOf('-');
  return dash < 0 ? sessionId : sessionId.slice(0, dash);
}

/**
 * Characters of the short id `list` prints: the end of the session id's timestamp (minute, second and
 * millisecond digits), which differs between goals of one directory where the hash never does.
 */
export const SHORT_ID_LENGTH = 8;

/** The short id of a session, e.g. `3f2a9c0d1e4b-20261130T152151123Z` → `52151123`. */
export function shortIdOf(sessionId: string): string {
  const stamp = sessionId.endsWith('Z') ? sessionId.slice(0, -1) : sessionId;
  return stamp.slice(-SHORT_ID_LENGTH);
}
