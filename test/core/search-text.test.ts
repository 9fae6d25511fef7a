/** Issue 26 item 3: queries over identifiers, and excerpts that keep matched tokens whole. */
import { describe, expect, it } from 'vitest';
import {
  HEADLINE_STOP as E,
  EXCERPT_CONTEXT_CHARS,
  excerptOf,
  markedOffsets,
  HEADLINE_START as S,
  searchQueryText,
} from '../../core/search-text';

/** What ts_headline gives for `original`: its split text with the given words marked. */
function headline(original: string, words: string[]): string {
  const split = Array.from(original, (c) => (/[\p{L}\p{N}\s]/u.test(c) ? c : ' ')).join('');
  return split.replace(/[\p{L}\p{N}]+/gu, (w) => (words.includes(w.toLowerCase()) ? `${S}${w}${E}` : w));
}

describe('searchQueryText', () => {
  it('turns a joined identifier into a phrase of its parts', () => {
    expect(searchQueryText('ZEBRA-4411')).toBe('"ZEBRA 4411"');
    expect(searchQueryText('v1.2.3')).toBe('"v1 2 3"');
    expect(searchQueryText('foo.bar_baz')).toBe('"foo bar baz"');
    expect(searchQueryText('notes')).toBe('notes');
  });
  it('keeps quoted phrases, negation and or', () => {
    expect(searchQueryText('"release code-word" -notes.txt or deploy')).toBe(
      '"release code word" -"notes txt" or deploy',
    );
    expect(searchQueryText('-secret')).toBe('-secret');
    expect(searchQueryText('- * ""')).toBe('');
  });
});

describe('excerptOf', () => {
  it('highlights the whole token, not its parts, without the sentence punctuation', () => {
    const text = 'The release code word is ZEBRA-4411.';
    expect(excerptOf(text, headline(text, ['zebra', '4411']))).toBe(
      'The release code word is **ZEBRA-4411**.',
    );
    const dotted = 'bumped to v1.2.3, see (foo.bar_baz) and notes.txt';
    expect(excerptOf(dotted, headline(dotted, ['v1', '2', '3']))).toBe(
      'bumped to **v1.2.3**, see (foo.bar_baz) and notes.txt',
    );
    expect(excerptOf(dotted, headline(dotted, ['foo', 'bar', 'baz']))).toContain('(**foo.bar_baz**)');
    expect(excerptOf(dotted, headline(dotted, ['notes']))).toContain('and **notes.txt**');
  });

  it('keeps up to 200 characters either side, whole words, and says where it cut', () => {
    const before = 'alpha-beta '.repeat(40);
    const after = ' gamma.delta'.repeat(40);
    const text = `${before}ZEBRA-4411${after}`;
    const excerpt = excerptOf(text, headline(text, ['zebra', '4411']));
    expect(excerpt.startsWith('… alpha-beta ')).toBe(true);
    expect(excerpt.endsWith(' gamma.delta …')).toBe(true);
    expect(excerpt).toContain('**ZEBRA-4411**');
    const [left, right] = excerpt.slice(2, -2).split('**ZEBRA-4411**');
    expect(left.length).toBeLessThanOrEqual(EXCERPT_CONTEXT_CHARS);
    expect(left.length).toBeGreaterThan(EXCERPT_CONTEXT_CHARS - 'alpha-beta '.length);
    expect(right.length).toBeLessThanOrEqual(EXCERPT_CONTEXT_CHARS);
    for (const word of excerpt.replace(/\*\*/g, '').split(' '))
      expect(['…', 'alpha-beta', 'gamma.delta', 'ZEBRA-4411']).toContain(word);
  });

  it('centres on the run of matches that shows the most query words', () => {
    const text = `ZEBRA alone here. ${'filler '.repeat(60)}then ZEBRA-4411 together`;
    const excerpt = excerptOf(text, headline(text, ['zebra', '4411']));
    expect(excerpt).toContain('**ZEBRA-4411**');
  });

  it('maps offsets across characters outside the basic plane', () => {
    const text = '😀 emoji then ZEBRA-4411 ✓';
    const marked = headline(text, ['zebra', '4411']);
    expect(markedOffsets(text, marked).map((s) => text.slice(s.start, s.end))).toEqual(['ZEBRA', '4411']);
    expect(excerptOf(text, marked)).toBe('😀 emoji then **ZEBRA-4411** ✓');
  });

  it('finds the marked words by their text when the headline is not the original character for character', () => {
    const text = 'The release code word is ZEBRA-4411.';
    const excerpt = excerptOf(text, `release code word is ${S}ZEBRA${E} ${S}4411${E}`);
    expect(excerpt).toBe('The release code word is **ZEBRA-4411**.');
  });

  it('gives the start of the text when nothing was marked', () => {
    expect(excerptOf('nothing to see', 'nothing to see')).toBe('nothing to see');
  });
});
