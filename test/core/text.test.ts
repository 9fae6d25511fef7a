import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clip,
  clipBytes,
  clipHead,
  clipHeadBytes,
  clipTail,
  cutAfter,
  cutBefore,
  oneLine,
  plural,
  storableJson,
  storableText,
  utf8Length,
} from '../../core/text';

/** Whether a string has a lone surrogate (what jsonb refuses). */
const wellFormed = (text: string) => text.isWellFormed();
const graphemesOf = (text: string) =>
  [...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(text)].map((s) => s.segment);

describe('text for people', () => {
  it('counts with the singular only for exactly one', () => {
    expect(plural(1, 'step')).toBe('1 step');
    expect(plural(0, 'step')).toBe('0 steps');
    expect(plural(2, 'entry', 'entries')).toBe('2 entries');
  });

  it('puts a text on one line of at most 100 characters', () => {
    expect(oneLine('  use tabs,\n\n  not spaces  ')).toBe('use tabs, not spaces');
    const long = oneLine('x'.repeat(150));
    expect(long).toHaveLength(100);
    expect(long.endsWith('…')).toBe(true);
    expect(oneLine('y'.repeat(100))).toBe('y'.repeat(100));
  });
});

describe('clip', () => {
  const command = `${'a'.repeat(58)}😀😀😀😀😀😀😀😀 tail; echo printed`;

  it('never cuts an emoji in half, at any length (the issue 31 command)', () => {
    for (let max = 1; max <= command.length + 1; max += 1) {
      const clipped = clip(command, max);
      expect(clipped.length).toBeLessThanOrEqual(max);
      expect(wellFormed(clipped)).toBe(true);
      if (clipped !== command) expect(clipped.endsWith('…')).toBe(true);
    }
    // 60 units would end in the middle of the second emoji: the cut goes before it.
    expect(clip(command, 61)).toBe(`${'a'.repeat(58)}😀…`);
  });

  it('keeps graphemes whole: a family emoji, a flag, an accent, a skin tone', () => {
    const family = '👨‍👩‍👧‍👦';
    expect(clip(`ab${family}cd`, 8)).toBe('ab…');
    expect(clip(`ab${family}cd`, 14)).toBe(`ab${family}…`);
    expect(clipHead('🇫🇷🇩🇪', 6)).toBe('🇫🇷');
    expect(clipHead('🇫🇷🇩🇪🇮🇹', 11)).toBe('🇫🇷🇩🇪');
    // A run of flags longer than the window the segmenter reads still pairs from the left.
    expect(clipHead('x🇫🇷'.repeat(1) + '🇩🇪'.repeat(60), 203)).toHaveLength(201);
    expect(clipHead('e\u0301e\u0301', 3)).toBe('e\u0301');
    expect(clipHead('👍🏽x', 3)).toBe('');
    expect(clipHead('\r\nx', 1)).toBe('');
  });

  it('keeps the end of a text from a boundary (clipTail)', () => {
    expect(clipTail('x😀y', 2)).toBe('y');
    expect(clipTail('x😀y', 3)).toBe('😀y');
    expect(clipTail('abc', 5)).toBe('abc');
  });

  it('clips by UTF-8 bytes without splitting a character', () => {
    expect(clipBytes('中文字符', 9)).toBe(`${'中文字符'.slice(0, 2)}…`);
    expect(utf8Length(clipBytes('😀'.repeat(60), 200))).toBeLessThanOrEqual(200);
    expect(clipHeadBytes('a😀b', 4)).toBe('a');
    expect(clipHeadBytes('a😀b', 5)).toBe('a😀');
    expect(utf8Length('a\né€😀\ud800')).toBe(Buffer.byteLength('a\né€😀\ud800'));
  });

  it('holds for any Unicode, lone surrogates included: within the length, never a new lone surrogate, a prefix', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 80 }),
        fc.integer({ min: 0, max: 90 }),
        (text, max) => {
          const head = clipHead(text, max);
          expect(head.length).toBeLessThanOrEqual(max);
          expect(text.startsWith(head)).toBe(true);
          if (wellFormed(text)) expect(wellFormed(head) && wellFormed(clip(text, max))).toBe(true);
          const tail = clipTail(text, max);
          expect(text.endsWith(tail)).toBe(true);
          expect(tail.length).toBeLessThanOrEqual(max);
          expect(clip(text, max).length).toBeLessThanOrEqual(max);
          const cut = cutBefore(text, max);
          expect(cut).toBeLessThanOrEqual(Math.min(max, text.length));
          expect(cutAfter(text, max)).toBeGreaterThanOrEqual(Math.min(max, text.length));
        },
      ),
    );
  });

  it('cuts only at grapheme boundaries of well-formed text', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.integer({ min: 0, max: 120 }),
        (text, max) => {
          const head = clipHead(text, max);
          const whole = graphemesOf(text);
          const kept = graphemesOf(head);
          expect(kept).toEqual(whole.slice(0, kept.length));
        },
      ),
    );
  });
});

describe('storable text', () => {
  it('replaces lone surrogates and NUL, and leaves good text alone', () => {
    expect(storableText('a\ud83db\0c😀')).toBe('a\ufffdb\ufffdc😀');
    const good = 'plain 中文 😀';
    expect(storableText(good)).toBe(good);
  });

  it('writes JSON that jsonb accepts, keys included', () => {
    const json = storableJson({ 'k\ud800': 'v\udc00\u0000', ok: '😀', escaped: '\\u0000' });
    expect(json).not.toMatch(/\\ud[89a-f]/i);
    expect(JSON.parse(json)).toEqual({ 'k\ufffd': 'v\ufffd\ufffd', ok: '😀', escaped: '\\u0000' });
  });
});
