/** Issue 26 item 3: an excerpt is made of whole tokens of the text, the matched ones bold, whatever the text. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXCERPT_CONTEXT_CHARS, excerptOf, HEADLINE_START, HEADLINE_STOP } from '../../core/search-text';

const token = fc.oneof(
  fc.constantFrom('ZEBRA-4411', 'v1.2.3', 'foo.bar_baz', 'notes.txt', '😀', 'Ünï', '(x)', '[[a]]', 'end.'),
  fc.string({ minLength: 1, maxLength: 12 }).map((s) => s.replace(/[\s*]/g, '') || 'w'),
);
const text = fc.array(fc.tuple(token, fc.constantFrom(' ', '  ', '\n', '\t')), {
  minLength: 1,
  maxLength: 200,
});

/** ts_headline's output: the split text, with some of its alphanumeric runs marked. */
function headlineOf(original: string, pick: (n: number) => boolean): string {
  const split = Array.from(original, (c) => (/[\p{L}\p{N}\s]/u.test(c) ? c : ' ')).join('');
  let n = 0;
  return split.replace(/[\p{L}\p{N}]+/gu, (w) => (pick(n++) ? `${HEADLINE_START}${w}${HEADLINE_STOP}` : w));
}

describe('excerptOf', () => {
  it('keeps whole tokens only, within 200 characters either side of the matches', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 7 }), (parts, every) => {
        const original = parts.map(([t, space]) => `${t}${space}`).join('');
        const excerpt = excerptOf(
          original,
          headlineOf(original, (n) => n % every === 0),
        );
        const tokens = new Set(original.split(/\s+/).filter(Boolean));
        const shown = excerpt.replace(/^… /, '').replace(/ …$/, '').split(' ').filter(Boolean);
        for (const word of shown) {
          // Every word shown is a whole token of the text: never cut, the marks only around it.
          expect(tokens.has(word.replace(/\*\*/g, '')), `${word} in ${excerpt}`).toBe(true);
        }
        expect(excerpt.length).toBeLessThanOrEqual(original.length + 4 * 200 + 10);
        expect(excerpt.replace(/\*\*/g, '').length).toBeLessThanOrEqual(
          Math.max(original.length, 2 * EXCERPT_CONTEXT_CHARS) + 2 * EXCERPT_CONTEXT_CHARS + 4,
        );
      }),
    );
  });
});
