/**
 * A cheap token estimate for text with no tokenizer at hand. It must not under-estimate: a budget
 * threshold judged on a low estimate lets a request slip past it. Characters per token vary four-fold
 * between prose and JSON (and more for CJK text), so a plain characters/4 rule under-counts exactly the
 * content that fills a context fastest: JSON, logs, ids and non-Latin text. Instead the text is read as
 * runs of one character class each, priced the way BPE tokenizers such as o200k_base split them.
 * Calibrated by scripts/measure-estimator.js and held within a band by test/core/tokens.test.ts.
 */

/** A run of letters of one case pattern (a word, or one part of a camelCase name) per this many letters… */
const LETTERS_PER_TOKEN = 7;
/** …up to this length; words are rarely longer, so longer runs (glued words, gibberish) split finer… */
const LONG_RUN_MIN_LETTERS = 12;
/** …into a token per this many further letters. */
const LONG_RUN_LETTERS_PER_TOKEN = 2;
/** In a mixed-case run, parts this short are one token per letter: random ids and base64 look like that. */
const SHORT_PART_MAX_LETTERS = 2;
/** Tokenizers split digit runs into groups of up to three digits. */
const DIGITS_PER_TOKEN = 3;
/** A letters-and-digits run this long (hashes, ids, base64) is priced by its length as well… */
const MIXED_RUN_MIN_CHARS = 8;
/** …at no fewer tokens than this per character, because such text splits into 1-3 character pieces. */
const MIXED_RUN_TOKENS_PER_CHAR = 0.7;
/** A run of ASCII punctuation: its first character is a token… */
const PUNCTUATION_FIRST_TOKENS = 1;
/** …and the rest merge partly (`":"`, `});`, `=>`), at this many tokens per character. */
const PUNCTUATION_NEXT_TOKENS = 0.4;
/**
 * A run of several spaces or tabs (indentation, aligned columns) or of line breaks is one token per this
 * many characters (tokenizers hold whitespace tokens of up to 16 line breaks or tabs).
 */
const WHITESPACE_CHARS_PER_TOKEN = 16;
/** A single space before a digit (tokenizers do not merge it into the number) or at the end is a token. */
const LONE_SPACE_TOKENS = 1;
/** Accented Latin and Cyrillic letters, per this many characters (they merge into words like ASCII does). */
const LATIN_EXTENDED_CHARS_PER_TOKEN = 4;
/** Greek, Hebrew, Arabic, Indic, Thai and other alphabets, per character. */
const OTHER_SCRIPT_TOKENS_PER_CHAR = 0.5;
/** CJK ideographs, kana, Hangul and full-width forms: about one token each. */
const CJK_TOKENS_PER_CHAR = 1;
/** Miscellaneous symbols and dingbats (⚠, ❌, ☐): most are two byte-level tokens each. */
const PICTOGRAPH_TOKENS_PER_CHAR = 2;
/**
 * Everything else outside ASCII, per UTF-16 unit: emoji (two units, one or two tokens), joiners and
 * variation selectors (a token each), punctuation, arrows, math and box drawing.
 */
const OTHER_TOKENS_PER_UNIT = 1;

/** Character classes, each priced per run. */
enum CharClass {
  Alphanumeric,
  Space,
  LineBreak,
  Punctuation,
  LatinExtended,
  OtherScript,
  Cjk,
  Pictograph,
  Other,
}

/** Estimated tokens of `text`, meant never to be below what a real tokenizer counts. */
export function estimateTokens(text: string): number {
  let tokens = 0;
  const length = text.length;
  let start = 0;
  while (start < length) {
    const charClass = classify(text.charCodeAt(start));
    let end = start + 1;
    while (end < length && classify(text.charCodeAt(end)) === charClass) end++;
    const runLength = end - start;
    switch (charClass) {
      case CharClass.Alphanumeric:
        tokens += alphanumericRunTokens(text, start, end);
        break;
      case CharClass.Space:
        if (runLength > 1) tokens += Math.ceil(runLength / WHITESPACE_CHARS_PER_TOKEN);
        else if (end === length || isDigit(text.charCodeAt(end))) tokens += LONE_SPACE_TOKENS;
        // Otherwise a single space is part of the next token (` word`, ` {`).
        break;
      case CharClass.LineBreak:
        tokens += Math.ceil(runLength / WHITESPACE_CHARS_PER_TOKEN);
        break;
      case CharClass.Punctuation:
        tokens += PUNCTUATION_FIRST_TOKENS + (runLength - 1) * PUNCTUATION_NEXT_TOKENS;
        break;
      case CharClass.LatinExtended:
        tokens += Math.ceil(runLength / LATIN_EXTENDED_CHARS_PER_TOKEN);
        break;
      case CharClass.OtherScript:
        tokens += runLength * OTHER_SCRIPT_TOKENS_PER_CHAR;
        break;
      case CharClass.Cjk:
        tokens += runLength * CJK_TOKENS_PER_CHAR;
        break;
      case CharClass.Pictograph:
        tokens += runLength * PICTOGRAPH_TOKENS_PER_CHAR;
        break;
      case CharClass.Other:
        tokens += runLength * OTHER_TOKENS_PER_UNIT;
        break;
    }
    start = end;
  }
  return Math.ceil(tokens);
}

/** Tokens of a run of ASCII letters and digits (a word, a name, a number, an id). */
function alphanumericRunTokens(text: string, start: number, end: number): number {
  let tokens = 0;
  let digits = 0;
  let i = start;
  while (i < end) {
    let j = i + 1;
    if (isDigit(text.charCodeAt(i))) {
      while (j < end && isDigit(text.charCodeAt(j))) j++;
      tokens += Math.ceil((j - i) / DIGITS_PER_TOKEN);
      digits += j - i;
    } else {
      while (j < end && !isDigit(text.charCodeAt(j))) j++;
      tokens += letterRunTokens(text, i, j);
    }
    i = j;
  }
  const runLength = end - start;
  if (digits > 0 && digits < runLength && runLength >= MIXED_RUN_MIN_CHARS) {
    tokens = Math.max(tokens, runLength * MIXED_RUN_TOKENS_PER_CHAR);
  }
  return tokens;
}

/**
 * Tokens of a run of ASCII letters. A lower-to-upper case change starts a new part (`budgetRequestGoal`
 * is three tokens). Long parts are priced by length; in a run of several parts, very short ones count a
 * token per letter, which is what random mixed-case text (base64, generated ids) costs.
 */
function letterRunTokens(text: string, start: number, end: number): number {
  let tokens = 0;
  let parts = 0;
  let partStart = start;
  let previousLower = false;
  for (let i = start; i < end; i++) {
    const lower = isLower(text.charCodeAt(i));
    if (!lower && previousLower) {
      tokens += partTokens(i - partStart);
      parts++;
      partStart = i;
    }
    previousLower = lower;
  }
  const lastPart = end - partStart;
  // A plain word (one part) is never priced as short parts: "of" and "to" are one token each.
  if (parts === 0) return wordTokens(lastPart);
  return tokens + partTokens(lastPart);
}

function partTokens(letters: number): number {
  return letters <= SHORT_PART_MAX_LETTERS ? letters : wordTokens(letters);
}

function wordTokens(letters: number): number {
  if (letters <= LONG_RUN_MIN_LETTERS) return Math.ceil(letters / LETTERS_PER_TOKEN);
  return (
    Math.ceil(LONG_RUN_MIN_LETTERS / LETTERS_PER_TOKEN) +
    Math.ceil((letters - LONG_RUN_MIN_LETTERS) / LONG_RUN_LETTERS_PER_TOKEN)
  );
}

function classify(code: number): CharClass {
  if (code < 0x80) {
    if (isDigit(code) || (code >= 0x41 && code <= 0x5a) || isLower(code)) return CharClass.Alphanumeric;
    if (code === 0x20 || code === 0x09) return CharClass.Space;
    if (code === 0x0a || code === 0x0d) return CharClass.LineBreak;
    return CharClass.Punctuation;
  }
  // Latin-1, Latin Extended, IPA, combining marks, Cyrillic.
  if (code < 0x370 || (code >= 0x400 && code < 0x530)) return CharClass.LatinExtended;
  // Greek, Armenian, Hebrew, Arabic, Indic, Thai, Georgian, … up to the general punctuation block.
  if (code < 0x2000) return CharClass.OtherScript;
  if (
    (code >= 0x2e80 && code <= 0x9fff) ||
    (code >= 0xac00 && code <= 0xd7af) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xff00 && code <= 0xffef)
  ) {
    return CharClass.Cjk;
  }
  if ((code >= 0x2600 && code <= 0x27bf) || (code >= 0x2b00 && code <= 0x2bff)) return CharClass.Pictograph;
  return CharClass.Other;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function isLower(code: number): boolean {
  return code >= 0x61 && code <= 0x7a;
}
