/**
 * The `pg` module, loaded without the check that costs Node 20 about 25 ms: to see whether it runs
 * in a Cloudflare Worker, pg builds a `Response` when `navigator` is not defined (it is from Node
 * 21 on), and the first `Response` loads all of undici. With a `navigator` that says Node.js for the
 * moment of the require, pg skips that; nothing else sees it (issue 10: the CLI starts in a blink).
 */
import type * as Pg from 'pg';

function loadPg(): typeof Pg {
  if ('navigator' in globalThis) return require('pg');
  Object.defineProperty(globalThis, 'navigator', {
    value: { userAgent: `Node.js/${process.version}` },
    configurable: true,
  });
  try {
    return require('pg');
  } finally {
    delete (globalThis as { navigator?: unknown }).navigator;
  }
}

const pg = loadPg();

/** pg's connection pool. */
export const Pool = pg.Pool;
/** pg's single connection. */
export const Client = pg.Client;
