import { createRequire } from 'node:module';
import fc from 'fast-check';
import { encode as encodeCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../../core/tokens';

/** The samples scripts/measure-estimator.js reports on (plain CommonJS, hence createRequire). */
const { buildSamples, CONTENT_TYPES } = createRequire(import.meta.url)(
  '../../scripts/estimator-samples.js',
) as {
  buildSamples: (options?: { count?: number; chars?: number }) => { type: string; text: string }[];
  CONTENT_TYPES: string[];
};

/** Never under the real count… */
const MIN_RATIO = 1.0;
/** …and not so far over that budgets compact long before they need to. */
const MAX_RATIO = 1.6;
/** Content types that are ASCII, where cl100k_base (GPT-4) splits about like o200k_base and must hold too. */
const ASCII_TYPES = [
  'english-prose',
  'typescript',
  'json-minified',
  'json-pretty',
  'shell-logs',
  'hex-and-ids',
];

const samples = buildSamples({ count: 6, chars: 3000 });

/** Absolute slack for very short texts, where one token is a large share. */
const TINY_TEXT_SLACK_TOKENS = 2;

describe('estimateTokens against o200k_base', () => {
  it.each(CONTENT_TYPES)('%s: every sample estimated at 1.0 to 1.6 times the real count', (type) => {
    const ofType = samples.filter((s) => s.type === type);
    expect(ofType.length).toBeGreaterThan(0);
    for (const { text } of ofType) {
      const ratio = estimateTokens(text) / encodeO200k(text).length;
      expect(ratio, `${type}: ${text.slice(0, 80)}`).toBeGreaterThanOrEqual(MIN_RATIO);
      expect(ratio, `${type}: ${text.slice(0, 80)}`).toBeLessThanOrEqual(MAX_RATIO);
    }
  });

  it.each(ASCII_TYPES)('does not under-estimate %s against cl100k_base either', (type) => {
    for (const { text } of samples.filter((s) => s.type === type)) {
      expect(estimateTokens(text)).toBeGreaterThanOrEqual(encodeCl100k(text).length);
    }
  });
});

/** JSON as tools return it: identifier-like keys, numbers, short strings, nesting. */
const jsonValue = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.integer({ min: -1e6, max: 1e9 }),
    fc.double({ min: -1e6, max: 1e6, noNaN: true }),
    fc.boolean(),
    fc.constant(null),
    fc.stringMatching(/^[a-z][a-z0-9 _./-]{0,24}$/),
    fc.uuid(),
    fc.array(tie('value'), { maxLength: 8 }),
    fc.dictionary(fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,14}$/), tie('value'), { maxKeys: 8 }),
  ),
})).value;

describe('estimateTokens on JSON', () => {
  it('never under-estimates minified or pretty JSON', () => {
    fc.assert(
      fc.property(fc.array(jsonValue, { minLength: 1, maxLength: 10 }), (value) => {
        for (const text of [JSON.stringify(value), JSON.stringify(value, null, 2)]) {
          // A token or two of slack: tiny documents like [{"a":{}}] cannot move a budget threshold.
          expect(estimateTokens(text) + TINY_TEXT_SLACK_TOKENS).toBeGreaterThanOrEqual(
            encodeO200k(text).length,
          );
        }
      }),
      { numRuns: 300 },
    );
  });

  it('counts a JSON list of short numbers far above characters/4, as a tokenizer does', () => {
    const text = JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ i, v: i % 7 })));
    const real = encodeO200k(text).length;
    // characters/4 would say about half of the real count and let such a result slip past a threshold.
    expect(Math.ceil(text.length / 4)).toBeLessThan(real);
    expect(estimateTokens(text)).toBeGreaterThanOrEqual(real);
  });
});

describe('estimateTokens basics', () => {
  it('is 0 for empty text and at least 1 for any other', () => {
    expect(estimateTokens('')).toBe(0);
    for (const text of [' ', 'a', '.', '\n', '7', 'é', '中', '😀']) {
      expect(estimateTokens(text)).toBeGreaterThanOrEqual(1);
    }
  });

  it('never shrinks when text is appended', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        // Appending can merge a run (`ab` + `c`) but never removes the tokens of either part's bulk.
        expect(estimateTokens(a + b)).toBeGreaterThanOrEqual(
          Math.max(estimateTokens(a), estimateTokens(b)) - 1,
        );
      }),
    );
  });

  it('prices camelCase parts, digit groups and random ids as a tokenizer splits them', () => {
    expect(estimateTokens('budgetRequestGoal')).toBe(3);
    expect(estimateTokens('123456789')).toBe(3);
    const hash = '4f9c2a0e7b1d3f5a6c8e9b0d2f4a6c8e0b1d3f5a';
    expect(estimateTokens(hash)).toBeGreaterThanOrEqual(encodeO200k(hash).length);
  });
});
