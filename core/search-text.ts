/**
 * Memory search over identifiers (issue 26 item 3). The index holds each message's text with every
 * character that is neither a letter, a digit nor white space turned into a space (migration 11), so
 * `ZEBRA-4411`, `v1.2.3`, `foo.bar_baz` and `notes.txt` are indexed as their words. A query is
 * rewritten the same way, each joined identifier becoming a phrase of its parts, and an excerpt is
 * cut from the original text around the matched tokens, whole tokens only.
 */

/** Characters of context kept on either side of the matched tokens in an excerpt. */
export const EXCERPT_CONTEXT_CHARS = 200;

/** Marks ts_headline puts around a matched word; neither can occur in the split text it marks. */
export const HEADLINE_START = '[[';
export const HEADLINE_STOP = ']]';

/** Marks around a whole matched token in an excerpt (Markdown bold). */
export const EXCERPT_MARK = '**';

const JOINER = /[^\p{L}\p{N}\s]+/gu;

/** One word of a query: its parts, each a run of letters and digits. */
function parts(word: string): string[] {
  return word
    .replace(JOINER, ' ')
    .split(/\s+/)
    .filter((part) => part.length > 0);
}

/**
 * A websearch_to_tsquery query whose identifiers match the split index: `ZEBRA-4411` becomes the
 * phrase `"ZEBRA 4411"`, a quoted phrase keeps its words, `-word` and `or` keep their meaning.
 */
export function searchQueryText(query: string): string {
  const out: string[] = [];
  const pattern = /(-?)"([^"]*)"?|(\S+)/g;
  for (let match = pattern.exec(query); match !== null; match = pattern.exec(query)) {
    if (match[3] === undefined) {
      const words = parts(match[2]);
      if (words.length > 0) out.push(`${match[1]}"${words.join(' ')}"`);
      continue;
    }
    const word = match[3];
    if (word.toLowerCase() === 'or') {
      out.push('or');
      continue;
    }
    const negated = word.startsWith('-') && word.length > 1;
    const words = parts(negated ? word.slice(1) : word);
    if (words.length === 0) continue;
    const sign = negated ? '-' : '';
    out.push(words.length === 1 ? `${sign}${words[0]}` : `${sign}"${words.join(' ')}"`);
  }
  return out.join(' ');
}

/** A matched token of the original text, as [start, end) UTF-16 offsets. */
interface TokenSpan {
  start: number;
  end: number;
}

/**
 * The offsets in `original` of the words ts_headline marked in `headline`, the split text of
 * `original` (one character for one character) with HEADLINE_START/STOP around each matched word.
 */
export function markedOffsets(original: string, headline: string): TokenSpan[] {
  const spans: TokenSpan[] = [];
  let at = 0; // UTF-16 offset in original
  let start = -1;
  let i = 0;
  while (i < headline.length) {
    if (headline.startsWith(HEADLINE_START, i)) {
      start = at;
      i += HEADLINE_START.length;
      continue;
    }
    if (headline.startsWith(HEADLINE_STOP, i) && start >= 0) {
      spans.push({ start, end: at });
      start = -1;
      i += HEADLINE_STOP.length;
      continue;
    }
    // One code point of the headline stands for one code point of the original.
    const headlineWidth = (headline.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
    const originalWidth = (original.codePointAt(at) ?? 0) > 0xffff ? 2 : 1;
    i += headlineWidth;
    at = Math.min(original.length, at + originalWidth);
  }
  // A headline that is not the original character for character (never seen, but not promised by
  // PostgreSQL): the marked words are found in the original by their text instead.
  if (at !== original.length || i !== headline.length) return spansByText(original, headline);
  return spans;
}

/** Where the words marked in a headline occur in the original, found by their text (any case). */
function spansByText(original: string, headline: string): TokenSpan[] {
  const lower = original.toLowerCase();
  const spans: TokenSpan[] = [];
  const marked = new RegExp(`${escapeRegExp(HEADLINE_START)}(.*?)${escapeRegExp(HEADLINE_STOP)}`, 'gs');
  for (const word of new Set(Array.from(headline.matchAll(marked), (m) => m[1].toLowerCase()))) {
    for (let at = lower.indexOf(word); word && at >= 0; at = lower.indexOf(word, at + word.length))
      spans.push({ start: at, end: at + word.length });
  }
  return spans.sort((a, b) => a.start - b.start);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The whole white-space-delimited token around a span, without the sentence's punctuation. */
function wholeToken(text: string, span: TokenSpan): TokenSpan {
  let start = span.start;
  let end = span.end;
  while (start > 0 && !/\s/.test(text[start - 1])) start--;
  while (end < text.length && !/\s/.test(text[end])) end++;
  const token = text.slice(start, end);
  const lead = token.length - token.replace(/^[("'`[{<]+/, '').length;
  const trail = token.length - token.replace(/[)"'`\]}>.,;:!?]+$/, '').length;
  // A token that is only punctuation keeps itself; otherwise the edges never cut into the match.
  if (lead + trail < token.length) {
    start = Math.min(start + lead, span.start);
    end = Math.max(end - trail, span.end);
  }
  return { start, end };
}

/** Distinct matched words inside [from, to): how well a window shows the query. */
function distinctWords(text: string, words: TokenSpan[], from: number, to: number): number {
  const seen = new Set<string>();
  for (const word of words)
    if (word.start >= from && word.end <= to) seen.add(text.slice(word.start, word.end).toLowerCase());
  return seen.size;
}

/**
 * An excerpt of `original` around its matched tokens: up to EXCERPT_CONTEXT_CHARS either side of the
 * best run of matches, cut at white space (never inside a token), each matched token whole in
 * EXCERPT_MARK, white space collapsed, "…" where text was left out; the text's start when nothing
 * was marked (a query of only -words).
 */
export function excerptOf(original: string, headline: string): string {
  const words = markedOffsets(original, headline);
  const merged: TokenSpan[] = [];
  for (const span of words.map((word) => wholeToken(original, word))) {
    const last = merged.at(-1);
    if (last && span.start <= last.end) last.end = Math.max(last.end, span.end);
    else merged.push({ ...span });
  }
  if (merged.length === 0) return leadingExcerpt(original);
  // The anchor whose window holds the most distinct matched words (the first on a tie).
  let anchor = merged[0];
  let best = -1;
  for (const token of merged) {
    const score = distinctWords(original, words, token.start, token.start + EXCERPT_CONTEXT_CHARS);
    if (score > best) {
      best = score;
      anchor = token;
    }
  }
  let last = anchor;
  for (const token of merged)
    if (token.start >= anchor.start && token.end <= anchor.start + EXCERPT_CONTEXT_CHARS) last = token;
  let from = Math.max(0, anchor.start - EXCERPT_CONTEXT_CHARS);
  let to = Math.min(original.length, last.end + EXCERPT_CONTEXT_CHARS);
  // Whole tokens only: a window that starts or ends inside a token drops that token.
  if (from > 0 && !/\s/.test(original[from - 1]))
    while (from < anchor.start && !/\s/.test(original[from])) from++;
  if (to < original.length && !/\s/.test(original[to]))
    while (to > last.end && !/\s/.test(original[to - 1])) to--;
  let excerpt = '';
  let at = from;
  for (const token of merged) {
    if (token.end <= from || token.start >= to) continue;
    excerpt += `${original.slice(at, token.start)}${EXCERPT_MARK}${original.slice(token.start, token.end)}${EXCERPT_MARK}`;
    at = token.end;
  }
  excerpt += original.slice(at, to);
  excerpt = excerpt.replace(/\s+/g, ' ').trim();
  return `${from > 0 ? '… ' : ''}${excerpt}${to < original.length ? ' …' : ''}`;
}

/** The first 2 × EXCERPT_CONTEXT_CHARS characters of a text, whole tokens only. */
function leadingExcerpt(original: string): string {
  let to = Math.min(original.length, 2 * EXCERPT_CONTEXT_CHARS);
  if (to < original.length && !/\s/.test(original[to])) while (to > 0 && !/\s/.test(original[to - 1])) to--;
  const excerpt = original.slice(0, to).replace(/\s+/g, ' ').trim();
  return `${excerpt}${to < original.length ? ' …' : ''}`;
}
