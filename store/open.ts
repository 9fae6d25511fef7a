import path from 'node:path';
import { migrate } from './migrations';
import { createPgClient, createPgliteClient, type SqlClient } from './sql';
import { SqlSessionStore } from './sql-store';
import type { SessionStore } from './types';

/** Where the session store lives: PostgreSQL when `databaseUrl` is set, else PGlite under `home`. */
export interface StoreOptions {
  databaseUrl?: string;
  /** goalrun's data directory; the embedded store lives in `<home>/store`. */
  home: string;
}

/** Subdirectory of the data directory that holds the embedded store. */
export const EMBEDDED_STORE_DIR = 'store';

const DEFAULT_PG_PORT = '5432';

/** Opens the session store and brings its schema up to date. */
export async function openStore(options: StoreOptions): Promise<SessionStore> {
  const client: SqlClient = options.databaseUrl
    ? createPgClient(options.databaseUrl)
    : await createPgliteClient(embeddedStoreDir(options.home));
  try {
    await migrate(client);
  } catch (error) {
    // Release the pool or the PGlite lock: the caller never gets a store it could close.
    await client.close().catch(() => {});
    throw error;
  }
  return new SqlSessionStore(client);
}

/** A one-line description of the store for humans; never contains a password. */
export function describeStore(options: StoreOptions): string {
  if (!options.databaseUrl) return `embedded PGlite at ${embeddedStoreDir(options.home)}`;
  let url: URL;
  try {
    url = new URL(options.databaseUrl);
  } catch {
    // Not a URL (e.g. "host=... password=..."): showing any of it could show the password.
    return 'PostgreSQL (connection string not shown)';
  }
  // A Unix-socket connection names its directory in ?host= and leaves the URL host empty.
  const host = decodeURIComponent(url.hostname) || url.searchParams.get('host') || 'localhost';
  const port = url.port || url.searchParams.get('port') || DEFAULT_PG_PORT;
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username);
  return `PostgreSQL at ${host}:${port}${database ? `/${database}` : ''}`;
}

/** The directory of the embedded store for a data directory. */
export function embeddedStoreDir(home: string): string {
  return path.resolve(home, EMBEDDED_STORE_DIR);
}
