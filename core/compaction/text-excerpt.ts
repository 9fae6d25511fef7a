/**
 * Bounded views of long text for compaction: clipping that never splits an emoji, and head/tail
 * excerpts that keep the error lines from the middle, so a long failing output keeps its gist.
 */
import { clipChars } from '../truncate';
import {
  EXCERPT_HEAD_SHARE,
  EXCERPT_LINE_CHARS,
  EXCERPT_MARKER_RESERVE,
  EXCERPT_PLAIN_HEAD_SHARE,
  EXCERPT_TAIL_SHARE,
} from './text-limits';

/** What marks clipped text. One UTF-16 unit, so bounds stay exact. */
export const ELLIPSIS = '…';

/**
 * Lines worth keeping from the middle of a long output: compiler and test-runner failures.
 * No word boundaries on purpose, so that `TypeError`, `FAILED` and `AssertionError` match.
 */
const ERROR_LINE =
  /error|fail|panic|exception|traceback|fatal|assert|expected|cannot|unable to|denied|not found|segmentation fault|[✗✘×]/i;

/** Whether a line looks like an error or a failure report. */
export function isErrorLine(line: string): boolean {
  return ERROR_LINE.test(line);
}

/** Number of characters (Unicode code points) of a text: what a person would call its length. */
export function charCount(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const high = text.charCodeAt(i);
    if (high < 0xd800 || high > 0xdbff) continue;
    const low = text.charCodeAt(i + 1);
    if (low >= 0xdc00 && low <= 0xdfff) {
      count -= 1;
      i += 1;
    }
  }
  return count;
}

/** `text` within `maxChars` UTF-16 units, ending in `…` when clipped; never splits a surrogate pair. */
export function clipText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars <= 0) return '';
  return `${clipChars(text, maxChars - ELLIPSIS.length)}${ELLIPSIS}`;
}

/** One line of text: newlines and tabs written as `\n` and `\t`, so a list item stays one item. */
export function oneLine(text: string): string {
  return text.replace(/\r?\n/g, '\\n').replace(/\t/g, '\\t');
}

/** Options of {@link excerpt}. */
export interface ExcerptOptions {
  /** Hard cap on the excerpt, markers included. */
  maxChars: number;
  /** Cap on one kept line (default EXCERPT_LINE_CHARS). */
  maxLineChars?: number;
  /** Most lines kept from the start and from the end (default: as many as the budget allows). */
  headLines?: number;
  tailLines?: number;
  /** Keep error lines from the middle too (for failed calls and test or build output). */
  keepErrors?: boolean;
}

function omittedMarker(count: number): string {
  return `${ELLIPSIS} ${count} ${count === 1 ? 'line' : 'lines'} omitted ${ELLIPSIS}`;
}

/** Drops blank lines at the end: they are noise, and would be the "tail" otherwise. */
function withoutTrailingBlanks(lines: string[]): string[] {
  let end = lines.length;
  while (end > 0 && lines[end - 1].trim() === '') end -= 1;
  return lines.slice(0, end);
}

/**
 * The head and tail of `text` (and, with `keepErrors`, its error lines from the middle) within
 * `maxChars`, with `… N lines omitted …` where lines were left out. Returns the text (long lines
 * clipped) when it fits. Deterministic: the same input always gives the same excerpt.
 */
export function excerpt(text: string, options: ExcerptOptions): string {
  const maxChars = Math.max(0, Math.floor(options.maxChars));
  const lineCap = Math.max(1, Math.min(options.maxLineChars ?? EXCERPT_LINE_CHARS, maxChars));
  const lines = withoutTrailingBlanks(text.split('\n')).map((line) => clipText(line, lineCap));
  const headLimit = options.headLines ?? Number.POSITIVE_INFINITY;
  const tailLimit = options.tailLines ?? Number.POSITIVE_INFINITY;
  const whole = lines.join('\n');
  if (lines.length <= headLimit + tailLimit && whole.length <= maxChars) return whole;

  // Two markers are reserved up front; every error line pays for the marker its gap may need.
  const budget = maxChars - 2 * EXCERPT_MARKER_RESERVE;
  if (budget <= 0) return clipText(whole, maxChars);
  const keepErrors = options.keepErrors === true;
  const selected = new Array<boolean>(lines.length).fill(false);

  let headUsed = 0;
  const headBudget = budget * (keepErrors ? EXCERPT_HEAD_SHARE : EXCERPT_PLAIN_HEAD_SHARE);
  for (let i = 0; i < lines.length && i < headLimit; i++) {
    const cost = lines[i].length + 1;
    if (headUsed + cost > headBudget) break;
    selected[i] = true;
    headUsed += cost;
  }

  let tailUsed = 0;
  const tailBudget = keepErrors ? budget * EXCERPT_TAIL_SHARE : budget - headUsed;
  for (let i = lines.length - 1, taken = 0; i >= 0 && taken < tailLimit && !selected[i]; i--, taken++) {
    const cost = lines[i].length + 1;
    if (tailUsed + cost > tailBudget) break;
    selected[i] = true;
    tailUsed += cost;
  }

  if (keepErrors) {
    let errorsLeft = budget - headUsed - tailUsed;
    for (let i = 0; i < lines.length; i++) {
      if (selected[i] || !isErrorLine(lines[i])) continue;
      const cost = lines[i].length + 1 + EXCERPT_MARKER_RESERVE;
      if (cost > errorsLeft) continue;
      selected[i] = true;
      errorsLeft -= cost;
    }
  }

  if (!selected.includes(true)) return clipText(whole, maxChars);
  const out: string[] = [];
  let gap = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!selected[i]) {
      gap += 1;
      continue;
    }
    if (gap > 0) out.push(omittedMarker(gap));
    gap = 0;
    out.push(lines[i]);
  }
  if (gap > 0) out.push(omittedMarker(gap));
  // The reserve covers the markers; the clip is a guard so the bound holds whatever the input.
  return clipText(out.join('\n'), maxChars);
}
