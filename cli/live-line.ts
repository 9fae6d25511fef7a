/**
 * The live progress line of `run` and `watch`. On a terminal it is one line rewritten in place
 * (the step, the call in progress, elapsed time, the retry attempt and its last error). Elsewhere
 * (a pipe, a log file, CI) a line is printed when a retry starts and then every 30 s while it lasts.
 */

import { terminalSafe } from '../core/text';
import { formatDuration, isStalledFailure, stalledText } from './output';
import { clipToWidth } from './terminal-text';

/** How often the line is repeated when not on a terminal while a call keeps failing. */
export const RETRY_REPEAT_MS = 30_000;

/** Widest line written when the terminal does not say its width. */
const DEFAULT_COLUMNS = 100;

/** What the line shows. */
export interface LiveState {
  step: number;
  /** The call in progress, e.g. `bash: npm test`, or `waiting for a worker`. */
  label: string;
  /** When the call started (retries included). */
  since: Date | null;
  attempt: number;
  lastFailure: string | null;
}

/** The text of the line. */
export function liveText(state: LiveState, now = Date.now()): string {
  const parts = [state.step > 0 ? `step ${state.step}` : null, state.label];
  if (state.since) parts.push(formatDuration(Math.max(0, now - state.since.getTime())));
  if (state.lastFailure && isStalledFailure(state.lastFailure)) parts.push(stalledText(state.attempt));
  else if (state.lastFailure)
    parts.push(`retry attempt ${state.attempt}, last error: ${oneLine(state.lastFailure)}`);
  return parts.filter((part) => part !== null).join(' · ');
}

/** The live line on one output stream. */
export class LiveLine {
  private shown = false;
  /** The call whose retry was last reported (off a terminal), and when. */
  private reported: { key: string; at: number } | null = null;

  constructor(private readonly out: NodeJS.WriteStream = process.stdout) {}

  /** Whether the line is rewritten in place (a terminal) or printed on events (anything else). */
  get inPlace(): boolean {
    return this.out.isTTY === true;
  }

  /** Shows the current state. `key` names the call, so a new call's retry is reported at once. */
  update(state: LiveState | null, key: string, now = Date.now()): void {
    if (this.inPlace) {
      if (!state) {
        this.clear();
        return;
      }
      // One row at most, counted in display columns: a line that wraps leaves a stale row per update.
      const width = (this.out.columns || DEFAULT_COLUMNS) - 1;
      const text = clipToWidth(terminalSafe(`  ${liveText(state, now)}`), width);
      this.out.write(`\r\x1b[2K${text}`);
      this.shown = true;
      return;
    }
    if (!state?.lastFailure) {
      this.reported = null;
      return;
    }
    const retryKey = `${key}#retrying`;
    if (this.reported?.key === retryKey && now - this.reported.at < RETRY_REPEAT_MS) return;
    this.out.write(`${terminalSafe(`  ${liveText(state, now)}`)}\n`);
    this.reported = { key: retryKey, at: now };
  }

  /** Prints a permanent line above the live line. */
  print(line: string): void {
    this.clear();
    this.out.write(`${terminalSafe(line)}\n`);
  }

  /** Removes the live line (before the outcome is printed). */
  clear(): void {
    if (this.shown) this.out.write('\r\x1b[2K');
    this.shown = false;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
