/**
 * `--output-format stream-json`: the session's event log printed as one JSON event per line, read
 * from the store with a cursor, so a late `watch` can replay from the start or follow what is new.
 */
import { type LoggedEvent, streamCheck, streamEventsOf } from '../core/event-log';
import { roundedShare } from '../core/prompt-cache';
import type { StreamEvent } from '../core/stream-events';
import type { SessionStore } from '../store/types';
import type { StatusView } from './goal-status';
import { PartialMessages } from './partial-messages';

/** Events read per query. */
const PAGE = 500;
/**
 * Event ids are shared by every session, so most gaps in one session's ids are other sessions'
 * events. A hole that no session holds is usually a write that did not take (a keyed insert that
 * found its row), but it may be a transaction that has not committed yet: events after a hole wait
 * this long for it.
 */
const GAP_WAIT_MS = 2_000;

/** How long a stream that expects the goal's own `init` (a new run or resume) waits for it to be logged. */
const INIT_WAIT_MS = 10_000;

/** How a stream opens: with the session as it is now (see opening()). */
interface Opening {
  describe: () => Promise<StatusView | null>;
  /** The goal is about to log its own init (a run or resume starting an execution): wait for it. */
  awaitInit: boolean;
  since: number;
}

/** Prints a session's events after a cursor, opening with an `init` that describes the session now. */
export class EventStreamPrinter {
  private cursor: number;
  private gapSince: number | null = null;
  private opening: Opening | null = null;
  /** The status now, added to the logged init the stream opens with. */
  private statusForInit: string | null = null;
  /** A result was printed since the last init (the execution's end is already in the stream). */
  private ended = false;
  /** With `--include-partial-messages`: the text of the step in progress. */
  private readonly partial: PartialMessages | null;

  constructor(
    private readonly store: SessionStore,
    private readonly sessionId: string,
    fromCursor: number,
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
    options: { partialMessages?: boolean } = {},
  ) {
    this.cursor = fromCursor;
    this.partial = options.partialMessages ? new PartialMessages(store, sessionId) : null;
  }

  /**
   * Makes the stream open with an `init` describing the session as it is now (status included):
   * the goal's own logged init when it is the next event, else one made from `describe`, with the
   * cursor the stream starts after.
   */
  openWith(describe: () => Promise<StatusView | null>, awaitInit = false): void {
    this.opening = { describe, awaitInit, since: Date.now() };
  }

  /** Prints the opening init; false while it waits for the goal's own. */
  private async open(rows: LoggedEvent[], final: boolean): Promise<boolean> {
    const opening = this.opening;
    if (!opening) return true;
    const next = rows[0];
    const nextIsInit = next !== undefined && streamEventsOf(this.sessionId, next)[0]?.type === 'init';
    if (!nextIsInit && opening.awaitInit && !final && Date.now() - opening.since < INIT_WAIT_MS) {
      return false;
    }
    this.opening = null;
    // The run or resume that logged this init started the execution: it was running then, even when a
    // fast goal has ended by the time this stream reads its first row.
    if (nextIsInit && opening.awaitInit) {
      this.statusForInit = 'running';
      return true;
    }
    const view = await opening.describe().catch(() => null);
    if (nextIsInit) {
      this.statusForInit = view?.status ?? 'running';
      return true;
    }
    if (view) {
      this.print({
        session_id: this.sessionId,
        cursor: this.cursor,
        type: 'init',
        workflow_id: view.workflowId,
        model: view.model,
        workspace: view.workspace,
        objective: view.objective,
        limits: {
          max_steps: view.limits?.maxSteps ?? 0,
          max_iterations: view.limits?.maxIterations ?? 0,
          max_minutes: view.limits?.maxMinutes ?? 0,
        },
        status: view.status,
      });
    }
    return true;
  }

  /** Prints what was logged since the last call (and, with partial messages, the text streamed since). */
  async poll(final = false): Promise<void> {
    await this.pollEvents(final);
    if (this.partial && this.opening === null) {
      for (const event of await this.partial.pending(this.cursor)) this.print(event);
    }
  }

  private async pollEvents(final: boolean): Promise<void> {
    for (;;) {
      const rows = await this.store.listEvents(this.sessionId, this.cursor, PAGE);
      if (!(await this.open(rows, final))) return;
      const pageStart = this.cursor;
      // At the first gap, one look at the whole page: when every id up to its last row is taken
      // (by this session or another), nothing is missing; else each gap is looked at in turn.
      let pageComplete: boolean | undefined;
      for (const row of rows) {
        if (row.id !== this.cursor + 1 && !final) {
          pageComplete ??= await this.allTaken(pageStart, rows[rows.length - 1].id);
          if (!pageComplete && !(await this.allTaken(this.cursor, row.id - 1)) && !this.gapAged()) return;
        }
        this.gapSince = null;
        for (const event of (await this.partial?.before(row, this.cursor)) ?? []) this.print(event);
        this.cursor = row.id;
        for (const event of streamEventsOf(this.sessionId, row)) this.print(event);
      }
      if (rows.length < PAGE) return;
    }
  }

  /** Ends the stream: a result from the final status when the log has none for this execution. */
  finish(view: StatusView): void {
    if (this.ended) return;
    this.print({
      session_id: this.sessionId,
      cursor: this.cursor,
      type: 'result',
      status: view.status,
      reason: view.reason,
      summary: view.finishSummary,
      steps: view.steps,
      iterations: view.iteration,
      duration_ms: view.elapsedMs,
      // A worker still on older code answers the state query without it.
      total_cost_usd: view.costUsd ?? 0,
      usage: {
        input_tokens: view.usage.inputTokens,
        output_tokens: view.usage.outputTokens,
        cache_read_tokens: view.usage.cacheReadTokens,
        cache_write_tokens: view.usage.cacheWriteTokens,
        cache_read_share: roundedShare(view.usage),
        total_tokens: view.usage.totalTokens,
        requests: view.usage.requests,
      },
      verified: view.verified === true,
      checks: (view.checks ?? []).map(streamCheck),
    });
  }

  private print(event: StreamEvent): void {
    if (event.type === 'init' && this.statusForInit !== null) {
      event = { ...event, status: this.statusForInit };
      this.statusForInit = null;
    }
    if (event.type === 'init') this.ended = false;
    if (event.type === 'result') this.ended = true;
    this.write(JSON.stringify(event));
  }

  /** Whether every event id in (afterId, upToId] is a visible event of some session. */
  private async allTaken(afterId: number, upToId: number): Promise<boolean> {
    return (await this.store.countEventsInRange(afterId, upToId)) === upToId - afterId;
  }

  /** Whether the hole before the next row is old enough to skip. */
  private gapAged(): boolean {
    const now = Date.now();
    this.gapSince ??= now;
    return now - this.gapSince >= GAP_WAIT_MS;
  }
}
