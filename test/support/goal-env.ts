/** The environment of one CLI test: its own data dir and task queue, the shared server and database. */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { openStore } from '../../store/open';
import type { SessionStore } from '../../store/types';
import { cliEnv, tempDir } from './cli';

/** Everything a CLI test needs to run goals in isolation from other test files. */
export interface GoalTestEnv {
  env: NodeJS.ProcessEnv;
  home: string;
  workspace: string;
  databaseUrl: string;
  temporalAddress: string;
  /** The server's HTTP API, which the read-only commands use (TEMPORAL_HTTP_ADDRESS), or '' when unknown. */
  temporalHttpAddress: string;
  taskQueue: string;
}

/**
 * A fresh data dir, workspace and task queue, against the suite's Temporal server and database.
 * The read-only commands read Temporal over its HTTP API, as they do on a dev server goalrun started;
 * pass `TEMPORAL_HTTP_ADDRESS: undefined` in `extra` for the gRPC client instead.
 */
export function goalTestEnv(name: string, extra: Record<string, string | undefined> = {}): GoalTestEnv {
  const home = tempDir(`${name}-home`);
  const workspace = tempDir(`${name}-ws`);
  const databaseUrl = inject('databaseUrl');
  const temporalAddress = inject('temporalAddress');
  // A test on a server of its own (TEMPORAL_ADDRESS in extra) reads it over gRPC unless it names that
  // server's HTTP API too: the suite's HTTP API would answer for another server.
  const ownServer = extra.TEMPORAL_ADDRESS !== undefined && !('TEMPORAL_HTTP_ADDRESS' in extra);
  const temporalHttpAddress = ownServer ? '' : inject('temporalHttpAddress');
  const taskQueue = `test-${name}-${randomUUID().slice(0, 8)}`;
  const env = cliEnv({
    GOALRUN_HOME: home,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_HTTP_ADDRESS: temporalHttpAddress || undefined,
    GOALRUN_TASK_QUEUE: taskQueue,
    ...extra,
  });
  return { env, home, workspace, databaseUrl, temporalAddress, temporalHttpAddress, taskQueue };
}

/** Opens the suite's PostgreSQL store for assertions. */
export function testStore(databaseUrl: string): Promise<SessionStore> {
  return openStore({ databaseUrl, home: tempDir('store-home') });
}

/** The suite's database URL with a planted password: local connections are trusted, so it is never checked. */
export function withPassword(databaseUrl: string, password: string): string {
  const url = new URL(databaseUrl);
  url.username = url.username || 'root';
  url.password = password;
  return url.toString();
}
