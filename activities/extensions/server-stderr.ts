/**
 * What an MCP server said on stderr, kept to tell why it failed (issue 26 §4). The cause is the
 * first error a program prints (`Error: Cannot find module …`), not its last line (`Node.js v20.20.2`):
 * the start of the output is kept as well as its end, and the first error line is picked out.
 */

/** Lines kept from the start of the output. */
const HEAD_LINES = 40;
/** Characters kept from its end. */
const TAIL_CHARS = 2_000;
/** Longest line kept. */
const LINE_MAX_CHARS = 300;
/** At most this many lines go into `doctor`'s report of a server that failed. */
export const DOCTOR_STDERR_LINES = 20;

/**
 * A line that states an error: `Error: …`, `TypeError: …`, `ModuleNotFoundError: …`, `npm error …`,
 * `error: …`, `Exception: …`.
 */
const ERROR_LINE =
  /(^|\s)([A-Za-z.]*(Error|Exception)(\s*\[[^\]]*\])?:\s*\S)|^npm (ERR!|error)\s|^(error|fatal)(\[[^\]]*\])?:\s/i;

function clipLine(line: string): string {
  return line.length > LINE_MAX_CHARS ? `${line.slice(0, LINE_MAX_CHARS - 1)}…` : line;
}

/** A server's stderr: its first lines and its end. */
export class ServerStderr {
  private head: string[] = [];
  private partial = '';
  private tail = '';
  private headDone = false;

  append(chunk: string): void {
    this.tail = (this.tail + chunk).slice(-TAIL_CHARS);
    if (this.headDone) return;
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      this.head.push(clipLine(line.replace(/\r$/, '')));
      if (this.head.length >= HEAD_LINES) {
        this.headDone = true;
        return;
      }
    }
  }

  /** Every kept line, in order (the head, then the end when it does not overlap the head). */
  lines(): string[] {
    const head = this.headDone
      ? this.head
      : [...this.head, ...(this.partial ? [clipLine(this.partial)] : [])];
    if (!this.headDone) return head.filter((line) => line.trim() !== '');
    const tail = this.tail.split('\n').slice(1).map(clipLine);
    return [...head, '…', ...tail].filter((line) => line.trim() !== '');
  }

  /** The first line that states an error, or null. */
  firstError(): string | null {
    return (
      this.lines()
        .find((line) => ERROR_LINE.test(line.trim()))
        ?.trim() ?? null
    );
  }

  /** One line for a notice: the first error line, else the last few lines. */
  summary(): string {
    const error = this.firstError();
    if (error) return error;
    return this.lines()
      .slice(-3)
      .map((line) => line.trim())
      .join(' | ');
  }

  /** Up to `max` lines for a report, around the first error line when there is one. */
  excerpt(max: number = DOCTOR_STDERR_LINES): string[] {
    const lines = this.lines();
    const at = lines.findIndex((line) => ERROR_LINE.test(line.trim()));
    const start = at > 2 ? Math.min(at - 2, Math.max(0, lines.length - max)) : 0;
    return lines.slice(start, start + max);
  }
}
