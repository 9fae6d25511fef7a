import { describe, expect, it } from 'vitest';
import { TokenCountCache } from '../../core/token-cache';
import { estimateTokens } from '../../core/tokens';

describe('TokenCountCache', () => {
  const texts = [
    '',
    'hello world',
    '{"name":"bash","parameters":{"type":"object"}}',
    '日本語のテキスト',
    'x'.repeat(5000),
  ];

  it('gives what estimateTokens gives, the first time and again', () => {
    const cache = new TokenCountCache(8);
    for (const text of texts) expect(cache.count(text)).toBe(estimateTokens(text));
    for (const text of texts) expect(cache.count(text)).toBe(estimateTokens(text));
    expect(cache.size).toBe(texts.length);
    expect(cache.sum(...texts)).toBe(texts.reduce((total, text) => total + estimateTokens(text), 0));
  });

  it('keeps at most its size, dropping the text used longest ago', () => {
    const estimated: string[] = [];
    const cache = new TokenCountCache(2, (text) => {
      estimated.push(text);
      return text.length;
    });
    cache.count('a');
    cache.count('bb');
    cache.count('a'); // a hit: bb is now the oldest
    cache.count('ccc'); // drops bb
    expect(cache.size).toBe(2);
    expect(cache.count('a')).toBe(1);
    expect(cache.count('ccc')).toBe(3);
    expect(estimated).toEqual(['a', 'bb', 'ccc']);
    expect(cache.count('bb')).toBe(2); // estimated again, and drops a
    expect(cache.count('ccc')).toBe(3);
    expect(cache.count('a')).toBe(1);
    expect(estimated).toEqual(['a', 'bb', 'ccc', 'bb', 'a']);
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => new TokenCountCache(0)).toThrow(/positive integer/);
    expect(() => new TokenCountCache(1.5)).toThrow(/positive integer/);
  });
});
