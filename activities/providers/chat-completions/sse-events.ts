/**
 * Splits a server-sent event stream into the data of its events, as the text arrives in pieces
 * that cut lines anywhere. Follows the parts of the SSE format a Chat Completions stream uses:
 * lines end in LF, CRLF or CR; `data:` lines of one event are joined with LF; a blank line ends the
 * event; comments (`: ping`) and the other fields (`event:`, `id:`, `retry:`) carry nothing we use.
 */
import { InvalidResponseDataError } from '@ai-sdk/provider';

/** The longest line or event accepted: a Chat Completions event is a few hundred bytes. */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/** Calls `onEvent` with the data of each complete event; throws on an event over MAX_EVENT_CHARS. */
export class SseEvents {
  private pending = '';
  private data: string[] = [];
  /** The last piece ended in CR, so an LF that starts the next piece belongs to that line end. */
  private afterCr = false;
  private started = false;
  private dataChars = 0;

  constructor(private readonly onEvent: (data: string) => void) {}

  /** Feeds the next piece of the stream's text. */
  push(text: string): void {
    // An empty piece must not forget that the last one ended in CR.
    if (text === '') return;
    let piece = text;
    if (!this.started && piece.length > 0) {
      this.started = true;
      if (piece.charCodeAt(0) === 0xfeff) piece = piece.slice(1);
    }
    if (this.afterCr && piece.startsWith('\n')) piece = piece.slice(1);
    this.afterCr = false;
    let start = 0;
    const buffered = this.pending;
    for (let i = 0; i < piece.length; i++) {
      const code = piece.charCodeAt(i);
      if (code !== 10 && code !== 13) continue;
      const line = (start === 0 ? buffered : '') + piece.slice(start, i);
      if (start === 0) this.pending = '';
      this.line(line);
      if (code === 13) {
        if (i + 1 === piece.length) this.afterCr = true;
        else if (piece.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    this.pending = start === 0 ? buffered + piece : piece.slice(start);
    if (this.pending.length > MAX_EVENT_CHARS) this.tooLong();
  }

  /** The stream ended: an event the server did not close with a blank line is still delivered. */
  end(): void {
    if (this.pending !== '') {
      this.line(this.pending);
      this.pending = '';
    }
    this.dispatch();
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith('data:')) {
      this.data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
      this.dataChars += line.length;
      if (this.dataChars > MAX_EVENT_CHARS) this.tooLong();
    }
    // Comments and other fields: nothing to keep.
  }

  /** A hostile or broken endpoint could otherwise grow one line until the worker runs out of memory. */
  private tooLong(): never {
    throw new InvalidResponseDataError({
      data: undefined,
      message: `an event of the response stream is over ${MAX_EVENT_CHARS} characters`,
    });
  }

  private dispatch(): void {
    if (this.data.length === 0) return;
    const data = this.data.length === 1 ? this.data[0] : this.data.join('\n');
    this.data = [];
    this.dataChars = 0;
    this.onEvent(data);
  }
}
