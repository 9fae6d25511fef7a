import { createHash } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { newSessionId, projectHash } from '../../store/session-id';

describe('projectHash', () => {
  it('is the first 12 hex characters of the SHA-256 of the absolute path', () => {
    const expected = createHash('sha256').update('/work/project').digest('hex').slice(0, 12);
    expect(projectHash('/work/project')).toBe(expected);
    expect(projectHash('/work/project')).toMatch(/^[0-9a-f]{12}$/);
  });

  it('resolves relative paths and trailing slashes to the same project', () => {
    expect(projectHash('.')).toBe(projectHash(process.cwd()));
    expect(projectHash('/work/project/')).toBe(projectHash('/work/project'));
    expect(projectHash('/work/project/sub/..')).toBe(projectHash('/work/project'));
    expect(projectHash(path.join('a', 'b'))).toBe(projectHash(path.resolve('a/b')));
  });

  it('differs between projects', () => {
    expect(projectHash('/work/project-a')).not.toBe(projectHash('/work/project-b'));
  });
});

describe('newSessionId', () => {
  it('joins the project hash and a compact UTC timestamp with milliseconds', () => {
    const now = new Date('2026-11-30T15:21:51.123Z');
    expect(newSessionId('/work/project', now)).toBe(`${projectHash('/work/project')}-20261130T152151123Z`);
  });

  it('sorts like the time it was made', () => {
    const earlier = newSessionId('/p', new Date('2026-01-02T03:04:05.006Z'));
    const later = newSessionId('/p', new Date('2026-01-02T03:04:05.007Z'));
    expect(earlier < later).toBe(true);
    expect(earlier).toMatch(/^[0-9a-f]{12}-20260102T030405006Z$/);
  });
});
