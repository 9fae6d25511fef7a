import { createHash } from 'node:crypto';
import path from 'node:path';
import { sessionIdWith } from '../core/session-ids';

/** Hex characters of the project hash: short enough to read, long enough not to collide across projects. */
export const PROJECT_HASH_LENGTH = 12;

/** The first 12 hex characters of the SHA-256 of the project directory's absolute path. */
export function projectHash(dir: string): string {
  return createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, PROJECT_HASH_LENGTH);
}

/** A session id, `<projectHash>-<UTC timestamp>`, e.g. `3f2a9c0d1e4b-20261130T152151123Z`. */
export function newSessionId(dir: string, now: Date): string {
  return sessionIdWith(projectHash(dir), now);
}
