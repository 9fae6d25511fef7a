/**
 * What the model sees of a large tool output: a head that fits the budget plus a footer naming
 * the spool copy and the byte offset to go on reading from (spec S-SPOOL).
 */

import { clipHead } from './text';

const encoder = new TextEncoder();

/** Byte length of a string in UTF-8. */
export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/** The footer that replaces the omitted part of an oversized output. */
export function truncationFooter(
  omittedLines: number,
  totalLines: number,
  spoolId: number,
  offset: number,
): string {
  return `[truncated: ${omittedLines} of ${totalLines} lines omitted; use tool-output {"id":"spool:${spoolId}","offset":${offset}} to read more]`;
}

/**
 * Cuts `output` to whole lines within `maxChars` and appends the footer. Returns the output
 * unchanged when it fits. The offset in the footer is the byte length of the head, so the model
 * reads on exactly where the head stopped.
 */
export function truncateForModel(output: string, spoolId: number, maxChars: number): string {
  if (output.length <= maxChars) return output;
  const lines = output.split('\n');
  let head = '';
  let kept = 0;
  for (const line of lines) {
    const next = kept === 0 ? line : `${head}\n${line}`;
    if (next.length > maxChars) break;
    head = next;
    kept += 1;
  }
  if (kept === 0) head = clipChars(output, maxChars);
  const headBytes = utf8Length(kept === 0 ? head : `${head}\n`);
  const omitted = lines.length - kept;
  return `${head}\n${truncationFooter(omitted, lines.length, spoolId, headBytes)}`;
}

/**
 * The first `maxChars` UTF-16 units of `text`, fewer when the cut would split a surrogate pair or a
 * grapheme: PostgreSQL's jsonb rejects a lone surrogate, so a clipped emoji would make the row unstorable.
 */
export function clipChars(text: string, maxChars: number): string {
  return clipHead(text, maxChars);
}

/** First and last non-empty lines of an output, clipped, for stubs and logs. */
export function edgeLines(output: string, maxChars = 120): { first: string; last: string } {
  const lines = output.split('\n').filter((line) => line.trim() !== '');
  const clip = (line: string | undefined) => clipChars(line ?? '', maxChars);
  return { first: clip(lines[0]), last: clip(lines[lines.length - 1]) };
}
