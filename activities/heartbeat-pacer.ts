/**
 * Heartbeats for an activity that reports on every chunk of a stream. A provider streams an answer in
 * hundreds of chunks, and every `Context.heartbeat` call is encoded and handed to the SDK's Core,
 * which sends the server at most one every few seconds anyway. The pacer passes a beat on when what
 * a retry must know changed (the provider began billing, the unreachable clock moved) or when
 * MIN_HEARTBEAT_GAP_MS passed since the last one; the beats in between only refresh counts that a
 * later beat carries.
 */

/** The least time between two beats whose material part is unchanged. */
export const MIN_HEARTBEAT_GAP_MS = 500;

/** Sends a beat; `force` sends it whatever the pace (the last beat before a failure). */
export type PacedBeat = (force?: boolean) => void;

/**
 * A beat for `send` that builds its details with `details` and sends them when their `materialOf`
 * changed since the last beat sent, when `force`d, or at most every `minGapMs` otherwise.
 */
export function pacedHeartbeat<T>(
  send: (details: T) => void,
  details: () => T,
  materialOf: (details: T) => string,
  minGapMs = MIN_HEARTBEAT_GAP_MS,
  now: () => number = Date.now,
): PacedBeat {
  let lastSentAt = Number.NEGATIVE_INFINITY;
  let lastMaterial: string | undefined;
  return (force = false) => {
    const current = details();
    const material = materialOf(current);
    const at = now();
    if (!force && material === lastMaterial && at - lastSentAt < minGapMs) return;
    lastSentAt = at;
    lastMaterial = material;
    send(current);
  };
}
