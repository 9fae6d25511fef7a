/**
 * The access token of `goalrun serve`: random, kept in $GOALRUN_HOME (mode 0600) so a restart keeps
 * old links working, and compared in constant time.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The token file, beside the config. */
export const SERVE_TOKEN_FILE = 'serve-token';
/** Random bytes of a token (hex-encoded: twice as many characters). */
const TOKEN_BYTES = 24;

/** The token kept in the home, made on first use. */
export function serveToken(home: string): string {
  const file = path.join(home, SERVE_TOKEN_FILE);
  try {
    const kept = fs.readFileSync(file, 'utf8').trim();
    if (/^[0-9a-f]{32,}$/.test(kept)) return kept;
  } catch {
    // None yet: made below.
  }
  const token = randomBytes(TOKEN_BYTES).toString('hex');
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/** Whether a presented token is the token (constant time; any other value, or none, is not). */
export function tokenMatches(expected: string, presented: string | undefined | null): boolean {
  if (!presented) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}
