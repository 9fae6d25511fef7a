/**
 * The shape of session ids (spec S-STORE): `<project hash>-<UTC timestamp>`. Pure, so the workflow
 * can name the fresh session of a /clear; the hash itself is computed in store/session-id.ts. Also
 * the short id every command prints and takes (issue 26 §10): the end of the timestamp, the part that
 * differs between goals of one directory, as long as it must be to name one goal of the store.
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
 * The fewest digits a short id has: the end of the timestamp (the hour's last digit, minutes,
 * seconds, milliseconds), which two goals share only if started at the same millisecond of the same
 * minute of hours ten apart; a short id grows by a digit at a time until it names one goal.
 */
export const SHORT_ID_LENGTH = 8;

/** Digits of the time part (`HHMMSSmmm`): a short id of more digits reaches back into the date. */
const TIME_DIGITS = 9;
/** Digits of the whole timestamp (`YYYYMMDD` + `HHMMSSmmm`). */
const STAMP_DIGITS = 8 + TIME_DIGITS;
const SESSION_ID_SHAPE = /^[0-9a-z]+-(\d{8})T(\d{9})Z$/i;

/** The timestamp's digits, `20261130152151123`, or null for an id of another shape. */
export function stampDigitsOf(sessionId: string): string | null {
  const match = SESSION_ID_SHAPE.exec(sessionId);
  return match ? `${match[1]}${match[2]}` : null;
}

/**
 * The short id of `sessionId` among `others` (the store's ids that may share its end; its own id
 * among them is ignored): the last SHORT_ID_LENGTH digits of its timestamp, or as many more as it
 * takes for no other id to end the same. The whole id when even the whole timestamp is shared
 * (goals of two directories started in the same millisecond) or the id has another shape.
 */
export function shortIdAmong(sessionId: string, others: Iterable<string>): string {
  const digits = stampDigitsOf(sessionId);
  if (digits === null) return sessionId;
  const rivals = [...others]
    .filter((other) => other !== sessionId)
    .map(stampDigitsOf)
    .filter((other): other is string => other !== null);
  for (let length = SHORT_ID_LENGTH; length <= STAMP_DIGITS; length++) {
    const tail = digits.slice(-length);
    if (!rivals.some((other) => other.endsWith(tail))) return tail;
  }
  return sessionId;
}

/** The shortest short id of a session, with nothing to tell it apart from: `…-20261130T152151123Z` → `52151123`. */
export function shortIdOf(sessionId: string): string {
  return shortIdAmong(sessionId, []);
}

/** Whether a string has the shape of a short id: SHORT_ID_LENGTH to 17 digits. */
export function isShortIdShape(text: string): boolean {
  return /^\d+$/.test(text) && text.length >= SHORT_ID_LENGTH && text.length <= STAMP_DIGITS;
}

/** Whether `shortId` (any length a short id may have) names `sessionId`: its timestamp ends with it. */
export function matchesShortId(sessionId: string, shortId: string): boolean {
  if (!isShortIdShape(shortId)) return false;
  return stampDigitsOf(sessionId)?.endsWith(shortId) ?? false;
}

/**
 * How every session id a short id names ends, for a LIKE in the store: `52151123` → `52151123Z`,
 * `0152151123` → `0T152151123Z` (past the time digits, the `T` between date and time). Null when
 * `shortId` is not one.
 */
export function sessionIdEndOf(shortId: string): string | null {
  if (!isShortIdShape(shortId)) return null;
  if (shortId.length <= TIME_DIGITS) return `${shortId}Z`;
  const cut = shortId.length - TIME_DIGITS;
  return `${shortId.slice(0, cut)}T${shortId.slice(cut)}Z`;
}
