/**
 * Heartbeats that go on by themselves while an activity runs, repeating the last details given: a
 * call whose own work beats rarely, or not at all (a file write, a slow store round trip), still beats
 * well within a foreground host's short heartbeat timeout (workflows/host-placement.ts).
 */
import type { Context } from '@temporalio/activity';

/** How often an activity with a keep-alive beats at the least. */
export const KEEP_ALIVE_MS = 2_000;

/** A keep-alive of one activity attempt: `beat` sends (and remembers) details, `stop` ends it. */
export interface KeepAlive {
  beat: (details?: unknown) => void;
  stop: () => void;
}

/** Starts beating for the activity of `context` every `intervalMs` until stopped. */
export function keepAlive(context: Context, intervalMs = KEEP_ALIVE_MS): KeepAlive {
  let last: unknown;
  const timer = setInterval(() => context.heartbeat(last), intervalMs);
  return {
    beat: (details?: unknown) => {
      last = details;
      context.heartbeat(details);
    },
    stop: () => clearInterval(timer),
  };
}
