import { describe, expect, it } from 'vitest';
import { editDistance, nearestNames } from '../../core/nearest-names';

describe('nearest names', () => {
  it('measures edits case-insensitively', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('Deploy', 'deploy')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('puts names containing the wanted one first, then the closest by edits, newest first on ties', () => {
    const names = ['release-notes', 'fix-login', 'fix-logout', 'login', 'docs'];
    expect(nearestNames('fix-logn', names, 3)).toEqual(['fix-login', 'fix-logout', 'login']);
    expect(nearestNames('login', names, 2)).toEqual(['fix-login', 'login']);
    expect(nearestNames('x', [], 3)).toEqual([]);
  });
});
