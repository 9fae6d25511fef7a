import { describe, expect, it } from 'vitest';
import { oneLine, plural } from '../../core/text';

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
