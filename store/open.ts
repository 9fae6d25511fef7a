import { embeddedStorePaths } from './embedded-files';
import { ensureEmbeddedStore } from './embedded-server';
import { migrate } from './migrations';
import { createPgClient, type SqlClient } from './sql';
import { SqlSessionStore } from './sql-store';
import type { SessionStore } from './types';

export { EMBEDDED_STORE_DIR } from './embedded-files';
export {
  type EmbeddedStoreStatus,
  embeddedStorePassword,
  embeddedStoreStatus,
  stopEmbeddedStore,
} from './embedded-server';

/**
 * Where the session store lives: PostgreSQL at `databaseUrl` when it is set, else goalrun's embedded
 * PostgreSQL server under `home`, started in the background on first use and shared by every process.
 */
export interface StoreOptions {
  databaseUrl?: string;
  /** goalrun's data directory; the embedded store lives in `<home>/store-pg`. */
  home: string;
  /** Where to say that the embedded server was started (default: a `goalrun:` line on stderr). */
  log?: (message: string) => void;
}

const DEFAULT_PG_PORT = '5432';

/** Opens the session store and brings its schema up to date. */
export async function openStore(options: StoreOptions): Promise<SessionStore> {
  const databaseUrl =
    options.databaseUrl || (await ensureEmbeddedStore(options.home, { log: options.log })).url;
  const client: SqlClient = createPgClient(databaseUrl);
  try {
    await migrate(client);
  } catch (error) {
    // Release the pool: the caller never gets a store it could close.
    await client.close().catch(() => {});
    throw error;
  }
  return new SqlSessionStore(client);
}

/** A one-line description of the store for humans; never contains a password. */
export function describeStore(options: StoreOptions): string {
  if (!options.databaseUrl) return `embedded PostgreSQL at ${embeddedStoreDir(options.home)}`;
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
  return embeddedStorePaths(home).dir;
}
