/**
 * Writes a model step's text as it streams in, for `--include-partial-messages` (store/stream-deltas.ts):
 * pieces gathered for STREAM_DELTA_FLUSH_MS (or up to STREAM_DELTA_MAX_CHARS) go in one row, one
 * write at a time so they land in order. Best-effort: a failed write keeps its text for the next
 * one and never fails the step; nothing here reaches the transcript or a Temporal payload.
 */
import type { DeltaStep } from '../store/stream-deltas';
import type { SessionStore } from '../store/types';

/** How long streamed text gathers before it is written: a row per tenth of a second at most. */
export const STREAM_DELTA_FLUSH_MS = 100;
/** A piece this long is written at once, without waiting for the flush interval. */
export const STREAM_DELTA_MAX_CHARS = 4_000;
/** How long streamed pieces are kept: enough for a stream that lags; the answer is the record. */
export const STREAM_DELTA_KEEP_MS = 15 * 60_000;
/** How long the end of a step waits for its last pieces before it stores the answer anyway. */
export const STREAM_DELTA_CLOSE_WAIT_MS = 2_000;

/** Gathers and writes one attempt's streamed text. */
export class StreamDeltaWriter {
  private pending = '';
  private offset = 0;
  private seq = 0;
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void>;

  constructor(
    private readonly store: Pick<SessionStore, 'appendStreamDelta' | 'pruneStreamDeltas'>,
    private readonly sessionId: string,
    private readonly at: DeltaStep,
  ) {
    // Old pieces go first, so a long goal keeps only the last few minutes of them.
    this.chain = store.pruneStreamDeltas(sessionId, STREAM_DELTA_KEEP_MS).catch(() => undefined);
  }

  /** Takes a piece of the model's text. */
  push(text: string): void {
    if (text === '') return;
    this.pending += text;
    if (this.pending.length >= STREAM_DELTA_MAX_CHARS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), STREAM_DELTA_FLUSH_MS);
  }

  /**
   * Writes what is left and waits (at most STREAM_DELTA_CLOSE_WAIT_MS) for every write: called before
   * the answer is stored, so a stream that sees the answer finds all of its pieces before it.
   */
  async close(): Promise<void> {
    this.flush();
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      this.chain,
      new Promise<void>((resolve) => {
        timeout = setTimeout(resolve, STREAM_DELTA_CLOSE_WAIT_MS);
      }),
    ]);
    clearTimeout(timeout);
  }

  /** Drops what is not written yet (the call failed or was stopped). */
  abandon(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = '';
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.chain = this.chain.then(() => this.write());
  }

  private async write(): Promise<void> {
    const text = this.pending;
    if (text === '') return;
    this.pending = '';
    try {
      await this.store.appendStreamDelta(this.sessionId, {
        ...this.at,
        seq: this.seq,
        offset: this.offset,
        text,
      });
      this.seq += 1;
      this.offset += text.length;
    } catch {
      // Kept for the next write: the stream then gets it late rather than never.
      this.pending = text + this.pending;
    }
  }
}
