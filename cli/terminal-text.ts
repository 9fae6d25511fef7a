/**
 * Text for the operator's terminal. Model and tool text is untrusted: an escape sequence in a tool
 * output or a summary could hide lines, fake a prompt or set the window title. Every line a command
 * prints for a person goes through `terminalSafe`, which shows control characters as visible escapes
 * (`\x1b]0;pwned\x07`), so the operator sees that something was attempted. JSON and stream-json are
 * data and keep the raw text. Widths are display columns (string-width): a CJK character or an emoji
 * takes two, a combining accent none.
 */
import { type ColumnAlign, formatTable } from '../core/table';
import { ELLIPSIS } from '../core/text';

/**
 * What a terminal would act on: C0 controls but newline and tab, DEL, C1 controls (0x9b is a CSI on
 * some terminals), and the bidirectional overrides and isolates that reorder what is shown.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** How a control character is shown: `\r`, `\x1b`, `\u202e`. */
function visible(char: string): string {
  const code = char.charCodeAt(0);
  if (char === '\r') return '\\r';
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control character a terminal would act on written visibly; CRLF line ends become LF. */
export function terminalSafe(text: string): string {
  const lines = text.includes('\r\n') ? text.replaceAll('\r\n', '\n') : text;
  return lines.replace(TERMINAL_CONTROLS, visible);
}

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
