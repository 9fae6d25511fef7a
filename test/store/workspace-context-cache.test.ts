/** The in-memory workspace contexts of a worker process: bounded, least recently used first out. */
import { describe, expect, it } from 'vitest';
import { WorkspaceContextCache } from '../../store/workspace-context-cache';

describe('the workspace context cache', () => {
  it('keeps at most its size, dropping the row used least recently', () => {
    const cache = new WorkspaceContextCache(2);
    cache.remember('a', { execution: 1, data: 'a1' });
    cache.remember('b', { execution: 1, data: 'b1' });
    expect(cache.get('a', 1)?.data).toBe('a1'); // a is now the most recent
    cache.remember('c', { execution: 1, data: 'c1' });
    expect(cache.get('b', 1)).toBeUndefined();
    expect(cache.get('a', 1)?.data).toBe('a1');
    expect(cache.get('c', 1)?.data).toBe('c1');
  });

  it('keys by session and execution, and forgets a session whole', () => {
    const cache = new WorkspaceContextCache();
    cache.remember('s', { execution: 1, data: 'one' });
    cache.remember('s', { execution: 2, data: 'two' });
    cache.remember('s2', { execution: 1, data: 'other' });
    expect(cache.get('s', 2)?.data).toBe('two');
    expect(cache.get('s', 3)).toBeUndefined();
    cache.forget('s');
    expect(cache.get('s', 1)).toBeUndefined();
    expect(cache.get('s', 2)).toBeUndefined();
    expect(cache.get('s2', 1)?.data).toBe('other');
  });
});
