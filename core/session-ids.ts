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
