/**
 * `--include-partial-messages`: the text of the model step in progress, printed as `text_delta`
 * events between its `step_start` and its answer. The CLI holds a lease on the session while it
 * follows (store/stream-deltas.ts), so the model step writes its text as it streams in; a goal that
 * no stream asks for writes none.
 */
import { EVENT_KINDS } from '../core/event-kinds';
import type { LoggedEvent } from '../core/event-log';
import type { StreamEvent } from '../core/stream-events';
import type { SessionStore } from '../store/types';

/** How long one lease lasts: a CLI that dies stops costing writes within this. */
export const STREAM_WATCH_LEASE_MS = 60_000;
/** How often a following CLI renews its lease (well within its length). */
const LEASE_RENEW_MS = 20_000;

/** Holds the session's partial-messages lease; renew() is cheap to call on every poll. */
export class StreamLease {
  private renewedAt = 0;

  constructor(
    private readonly store: Pick<SessionStore, 'watchStream'>,
    private readonly sessionId: string,
  ) {}

  /** Takes or renews the lease when it is due; a store that cannot take it costs only the deltas. */
  async renew(now = Date.now()): Promise<void> {
    if (now - this.renewedAt < LEASE_RENEW_MS) return;
    this.renewedAt = now;
    await this.store.watchStream(this.sessionId, now + STREAM_WATCH_LEASE_MS).catch(() => undefined);
  }
}

/** The step whose text is printed as it streams, and how far it got. */
interface OpenStep {
  execution: number;
  step: number;
  attempt: number;
  seq: number;
}

/** Turns the stored pieces of the step in progress into `text_delta` events, in order. */
export class PartialMessages {
  private open: OpenStep | null = null;

  constructor(
    private readonly store: Pick<SessionStore, 'listStreamDeltas'>,
    private readonly sessionId: string,
  ) {}

  /**
   * Called before a logged event is printed: the pieces of the open step that came before it, and
   * which step (if any) streams after it.
   */
  async before(row: LoggedEvent, cursor: number): Promise<StreamEvent[]> {
    if (row.kind === EVENT_KINDS.modelUsage || row.kind === EVENT_KINDS.stepStart) {
      const pieces = await this.pending(cursor);
      this.open = null;
      if (row.kind === EVENT_KINDS.stepStart) {
        const data = (row.data ?? {}) as { step?: unknown; execution?: unknown };
        // A step logged by an older build says no execution: it has no pieces to look for.
        if (typeof data.step === 'number' && typeof data.execution === 'number') {
          this.open = { execution: data.execution, step: data.step, attempt: 0, seq: -1 };
        }
      }
      return pieces;
    }
    return [];
  }

  /** The pieces of the open step stored since the last call. */
  async pending(cursor: number): Promise<StreamEvent[]> {
    const open = this.open;
    if (!open) return [];
    const rows = await this.store
      .listStreamDeltas(
        this.sessionId,
        { execution: open.execution, step: open.step },
        { attempt: open.attempt, seq: open.seq },
      )
      .catch(() => []);
    const last = rows.at(-1);
    if (last) {
      open.attempt = last.attempt;
      open.seq = last.seq;
    }
    return rows.map((row) => ({
      session_id: this.sessionId,
      cursor,
      type: 'text_delta' as const,
      step: row.step,
      attempt: row.attempt,
      offset: row.offset,
      text: row.text,
    }));
  }
}
