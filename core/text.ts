/**
 * Text helpers: counts for people, and the one way text is clipped and made storable. Model and
 * tool text is arbitrary Unicode: a cut inside a surrogate pair leaves a lone surrogate, which
 * PostgreSQL's jsonb refuses, and a cut inside a grapheme (an emoji with its modifier, a letter with
 * its accent) shows a broken character. Every clipper of text bound for a summary, a notice, an event
 * or a payload uses these functions.
 */

/** What a clipped text ends with. */
export const ELLIPSIS = '…';

/**
 * UTF-16 units on each side of a cut that the grapheme segmenter reads. A grapheme longer than this
 * (a run of dozens of combining marks) is cut between code points instead, still never inside a pair.
 */
const GRAPHEME_WINDOW = 64;

let segmenter: Intl.Segmenter | undefined;

function graphemes(): Intl.Segmenter {
  segmenter ??= new Intl.Segmenter('en', { granularity: 'grapheme' });
  return segmenter;
}

/** `1 step`, `2 steps`: a count with its noun, singular only for exactly one. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/** A text on one line of at most 100 characters (whitespace runs become one space), for notes. */
export function oneLine(text: string): string {
  return clip(text.replace(/\s+/g, ' ').trim(), 100);
}

/** Printable ASCII: a cut between two of these is always between graphemes. */
function isPlainAscii(code: number): boolean {
  return code >= 0x20 && code < 0x7f;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** A regional indicator (half a flag) ends at `at`: its low surrogate is DDE6–DDFF after D83C. */
function regionalIndicatorBefore(text: string, at: number): boolean {
  const low = text.charCodeAt(at - 1);
  return text.charCodeAt(at - 2) === 0xd83c && low >= 0xdde6 && low <= 0xddff;
}

/**
 * The grapheme boundaries of `text` near `at`: the nearest at or before it and the nearest at or after
 * it. Only a window around `at` is segmented, so clipping a megabyte costs no more than a line.
 */
function boundariesAround(text: string, at: number): { before: number; after: number } {
  let start = Math.max(0, at - GRAPHEME_WINDOW);
  if (start > 0 && isLowSurrogate(text.charCodeAt(start)) && isHighSurrogate(text.charCodeAt(start - 1)))
    start -= 1;
  // Flags pair regional indicators from the left: start the window where a run of them starts.
  while (start >= 2 && regionalIndicatorBefore(text, start)) start -= 2;
  const end = Math.min(text.length, at + GRAPHEME_WINDOW);
  let before = start;
  let after = end;
  for (const { index } of graphemes().segment(text.slice(start, end))) {
    const boundary = start + index;
    if (boundary <= at) before = boundary;
    if (boundary >= at) {
      after = boundary;
      break;
    }
  }
  return { before, after };
}

/** Whether `text` can be cut at `at` without splitting a character or a grapheme, from what is around it. */
function plainCut(text: string, at: number): boolean {
  return isPlainAscii(text.charCodeAt(at - 1)) && isPlainAscii(text.charCodeAt(at));
}

/** The largest index ≤ `at` where `text` can be cut without splitting a surrogate pair or a grapheme. */
export function cutBefore(text: string, at: number): number {
  if (at <= 0) return 0;
  if (at >= text.length) return text.length;
  if (plainCut(text, at)) return at;
  return boundariesAround(text, at).before;
}

/** The smallest index ≥ `at` where `text` can be cut without splitting a surrogate pair or a grapheme. */
export function cutAfter(text: string, at: number): number {
  if (at <= 0) return 0;
  if (at >= text.length) return text.length;
  if (plainCut(text, at)) return at;
  return boundariesAround(text, at).after;
}

/**
 * `text` within `max` UTF-16 units, ending in `…` when clipped. Never cuts inside a surrogate pair
 * or a grapheme, so the result may be shorter than `max`.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return '';
  return `${text.slice(0, cutBefore(text, max - ELLIPSIS.length))}${ELLIPSIS}`;
}

/** The longest start of `text` within `max` UTF-16 units that ends between graphemes (no ellipsis). */
export function clipHead(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, cutBefore(text, Math.max(0, max)));
}

/** The longest end of `text` within `max` UTF-16 units that starts between graphemes (no ellipsis). */
export function clipTail(text: string, max: number): string {
  return text.length <= max ? text : text.slice(cutAfter(text, text.length - Math.max(0, max)));
}

/** UTF-8 bytes of one code point (a lone surrogate is written as U+FFFD, three bytes). */
function utf8Bytes(code: number): number {
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

/** The largest index of `text` whose prefix fits in `maxBytes` UTF-8 bytes, between graphemes. */
function indexWithinBytes(text: string, maxBytes: number): number {
  let bytes = 0;
  let index = 0;
  while (index < text.length) {
    const code = text.codePointAt(index) as number;
    const size = utf8Bytes(code);
    if (bytes + size > maxBytes) break;
    bytes += size;
    index += code > 0xffff ? 2 : 1;
  }
  return cutBefore(text, index);
}

/** Bytes of `text` in UTF-8 (no Buffer: this module runs in workflow code too). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.codePointAt(index) as number;
    bytes += utf8Bytes(code);
    if (code > 0xffff) index += 1;
  }
  return bytes;
}

/** `text` within `maxBytes` UTF-8 bytes, ending in `…` when clipped; never splits a character or grapheme. */
export function clipBytes(text: string, maxBytes: number): string {
  // Each UTF-16 unit is at most three bytes, so a text this short fits without counting.
  if (text.length * 3 <= maxBytes || utf8Length(text) <= maxBytes) return text;
  const room = maxBytes - utf8Length(ELLIPSIS);
  if (room < 0) return '';
  return `${text.slice(0, indexWithinBytes(text, room))}${ELLIPSIS}`;
}

/** The longest start of `text` within `maxBytes` UTF-8 bytes that ends between graphemes (no ellipsis). */
export function clipHeadBytes(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  return text.slice(0, indexWithinBytes(text, maxBytes));
}

/**
 * `text` as every store and payload takes it: a lone surrogate (a clipped emoji from an old build,
 * undecodable bytes of a file name, a provider's broken stream) becomes U+FFFD, and so does NUL,
 * which PostgreSQL refuses in text and jsonb alike. Well-formed text without NUL is returned as is.
 */
export function storableText(text: string): string {
  const wellFormed = text.isWellFormed() ? text : text.toWellFormed();
  return wellFormed.includes('\0') ? wellFormed.replaceAll('\0', '\uFFFD') : wellFormed;
}

/**
 * JSON escapes PostgreSQL's jsonb refuses: `\u0000`, and a `\uD800`–`\uDFFF` escape that is not half
 * of a pair. `\\` is matched too, so that an escaped backslash followed by `u0000` is left alone.
 */
const UNSTORABLE_JSON_ESCAPES =
  /\\\\|\\u0000|\\ud[89ab][0-9a-f]{2}(?:\\ud[c-f][0-9a-f]{2})?|\\ud[c-f][0-9a-f]{2}/gi;

/**
 * JSON text of `value` that jsonb accepts whatever strings (or keys) it holds: JSON.stringify writes a
 * lone surrogate as a `\udXXX` escape and NUL as `\u0000`, which jsonb refuses; both become U+FFFD.
 */
export function storableJson(value: unknown): string {
  const json = storableText(JSON.stringify(value));
  if (!json.includes('\\u')) return json;
  return json.replace(UNSTORABLE_JSON_ESCAPES, (found) =>
    found === '\\\\' || found.length === 12 ? found : '\\ufffd',
  );
}

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

/**
 * `text` with every control character a terminal would act on written visibly (`\x1b]0;…`), CRLF
 * line ends as LF: model and tool text as a person's terminal or a log may show it. An escape
 * sequence from a hostile model cannot then set the window title, clear the screen or fake a prompt,
 * and whoever reads it sees that it was tried.
 */
export function terminalSafe(text: string): string {
  const lines = text.includes('\r\n') ? text.replaceAll('\r\n', '\n') : text;
  return lines.replace(TERMINAL_CONTROLS, visible);
}
