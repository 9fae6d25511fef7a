/**
 * Text for the Temporal Web UI's Markdown (a workflow's summary and current details). Its renderer
 * reads `$…$` as math, so `$0.50 spent, $0.00 reserved` comes out as a formula with the dollars
 * gone; every `$` outside a code span is escaped. Code spans are left alone: a backslash there
 * would be shown as it is.
 */

/** The text with each `$` outside code spans escaped (`\$`), and a backslash just before one kept. */
export function escapeUiMarkdown(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '`') {
      const run = backtickRun(text, i);
      const close = closingRun(text, i + run, run);
      // An unmatched backtick run is literal text; a matched one is a code span, copied whole.
      const end = close === -1 ? i + run : close + run;
      out += text.slice(i, end);
      i = end;
      continue;
    }
    if (ch === '$') {
      // `\$` in the text: its backslash is escaped too, or it would escape this dollar and vanish.
      out += trailingBackslashes(out) % 2 === 1 ? '\\\\$' : '\\$';
      i += 1;
      continue;
    }
    out += ch;
    i += 1;
  }
  return out;
}

/** How many backticks start at `from`. */
function backtickRun(text: string, from: number): number {
  let n = 0;
  while (text[from + n] === '`') n += 1;
  return n;
}

/** Where a run of exactly `length` backticks starts after `from` (CommonMark's closing run), or -1. */
function closingRun(text: string, from: number, length: number): number {
  let i = from;
  while (i < text.length) {
    if (text[i] !== '`') {
      i += 1;
      continue;
    }
    const run = backtickRun(text, i);
    if (run === length) return i;
    i += run;
  }
  return -1;
}

/** How many backslashes the text ends with. */
function trailingBackslashes(text: string): number {
  let n = 0;
  while (text[text.length - 1 - n] === '\\') n += 1;
  return n;
}
