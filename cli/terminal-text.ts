/**
 * Text for the operator's terminal. Model and tool text is untrusted: an escape sequence in a tool
 * output or a summary could hide lines, fake a prompt or set the window title. Every line a command
 * prints for a person goes through `terminalSafe` (core/text.ts), which shows control characters as visible escapes
 * (`\x1b]0;pwned\x07`), so the operator sees that something was attempted. JSON and stream-json are
 * data and keep the raw text. Widths are display columns (string-width): a CJK character or an emoji
 * takes two, a combining accent none.
 */
import { type ColumnAlign, formatTable } from '../core/table';
import { ELLIPSIS, terminalSafe } from '../core/text';

type StringWidth = (text: string, options?: { countAnsiEscapeCodes?: boolean }) => number;
let stringWidth: StringWidth | undefined;

/** Columns `text` takes on a terminal (loaded on first use: most commands print no table). */
export function displayWidth(text: string): number {
  // string-width is an ES module; Node 20.19 and later load it with require (require(esm)).
  stringWidth ??= (require('string-width') as { default: StringWidth }).default;
  // Counted as printed: escape sequences are shown visibly, so they take their columns.
  return stringWidth(text, { countAnsiEscapeCodes: true });
}

let segmenter: Intl.Segmenter | undefined;

/** `text` within `columns` display columns, ending in `…` when clipped; graphemes are kept whole. */
export function clipToWidth(text: string, columns: number): string {
  if (displayWidth(text) <= columns) return text;
  if (columns <= 0) return '';
  segmenter ??= new Intl.Segmenter('en', { granularity: 'grapheme' });
  const room = columns - displayWidth(ELLIPSIS);
  let used = 0;
  let end = 0;
  for (const { segment, index } of segmenter.segment(text)) {
    const width = displayWidth(segment);
    if (used + width > room) break;
    used += width;
    end = index + segment.length;
  }
  return `${text.slice(0, end)}${ELLIPSIS}`;
}

/** Rows as a table (core/table.ts) measured in display columns, cells made terminal-safe. */
export function terminalTable(rows: string[][], align: readonly ColumnAlign[] = []): string[] {
  return formatTable(
    rows.map((row) => row.map(terminalSafe)),
    align,
    displayWidth,
  );
}
