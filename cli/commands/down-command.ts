/**
 * `goalrun down` (issue 26 §10): stops what goalrun started in the background under GOALRUN_HOME, the
 * Temporal dev server and the embedded PostgreSQL store, and nothing else: a server of someone else's
 * (or `goalrun dev` in a terminal) is left alone. Open goals keep their state in both (the dev server's
 * `temporal.db` and the store), so stopping loses nothing, but it halts them mid-step: refused while
 * any is open, unless --force.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../core/errors';
import { shortIdOf } from '../../core/session-ids';
import { GOAL_WORKFLOW_TYPE, sessionIdOf } from '../../core/workflow-names';
import { embeddedStoreStatus, stopEmbeddedStore } from '../../store/open';
import { isProcessAlive } from '../../system/processes';
import type { CliContext } from '../context';
import { DEV_SERVER_FILES, normalizeAddress, stopBackgroundDevServer } from '../dev-server';
import { looksLikeDevServer, readPidFile } from '../dev-server-files';
import { type DevServerRecord, isLiveDevServer, parseDevServerRecord } from '../dev-server-record';
import { printJson, say } from '../output';
import { HttpTemporalReader } from '../temporal-http';
import type { TemporalReader } from '../temporal-reader';
import { runningGoals } from '../worker-presence';

/** Open goals named in the refusal at most. */
const GOALS_NAMED = 5;
/** Open goals looked up at most. */
const GOALS_LOOKED_UP = 100;

/** Options of `goalrun down`. */
export interface DownOptions {
  force?: boolean;
  json?: boolean;
}

/** The dev server goalrun runs from this data directory. */
interface OwnDevServer {
  pid: number;
  /** Where it answers (from its record; absent for a record of an older goalrun). */
  address?: string;
  httpPort?: number;
  /** Started by `goalrun dev` in a terminal, not in the background: down leaves it to its terminal. */
  foreground: boolean;
}

/** `goalrun down [--force] [--json]`. */
export async function downCommand(context: CliContext, options: DownOptions): Promise<number> {
  const { home } = context.settings;
  const server = ownDevServer(home);
  const store = embeddedStoreStatus(home);
  const storeRuns = store.running && store.pid !== undefined;
  if (!server && !storeRuns) {
    if (options.json) printJson({ stopped: { devServer: null, store: null } });
    else
      say(
        `nothing to stop: goalrun runs no background Temporal dev server and no embedded store from ${home}`,
      );
    return 0;
  }
  if (!options.force) {
    const open = await openGoals(context, server, storeRuns);
    if (open === null)
      throw new ConfigError(
        `could not tell whether goals are open on the dev server at ${server?.address ?? 'its address'}; pass --force to stop it anyway`,
      );
    if (open.length > 0) throw refusal(open);
  }
  const stoppedServer =
    server && !server.foreground && (await stopBackgroundDevServer(home))
      ? { pid: server.pid, address: server.address ?? null }
      : null;
  const stoppedStore =
    storeRuns && (await stopEmbeddedStore(home)) ? { pid: store.pid, port: store.port } : null;
  if (options.json) {
    printJson({
      stopped: { devServer: stoppedServer, store: stoppedStore },
      ...(server?.foreground ? { leftRunning: { devServer: { pid: server.pid, foreground: true } } } : {}),
    });
    return 0;
  }
  if (stoppedServer)
    say(
      `stopped the Temporal dev server goalrun started (pid ${stoppedServer.pid}${stoppedServer.address ? `, ${stoppedServer.address}` : ''}); its state stays in ${join(home, DEV_SERVER_FILES.db)}`,
    );
  if (server?.foreground)
    say(`left \`goalrun dev\` running (pid ${server.pid}): it runs in a terminal, stop it there with Ctrl-C`);
  if (stoppedStore)
    say(
      `stopped the embedded store (pid ${stoppedStore.pid}, port ${stoppedStore.port}); its data stays in ${store.dataDir}`,
    );
  if (!stoppedServer && !stoppedStore) say('nothing was stopped');
  else say('any goalrun command starts them again when it needs them');
  return 0;
}

/** The dev server goalrun started from `home`, while it lives (its pid file, else its record). */
function ownDevServer(home: string): OwnDevServer | null {
  const record = readRecord(home);
  const pid = readPidFile(join(home, DEV_SERVER_FILES.pid));
  if (pid !== null && isProcessAlive(pid) && looksLikeDevServer(pid)) {
    const same = record?.pid === pid ? record : null;
    return { pid, address: same?.address, httpPort: same?.httpPort, foreground: false };
  }
  // No background server: a record of a live server is `goalrun dev`'s, in the foreground.
  if (record && isLiveDevServer(record.pid, '/proc'))
    return { pid: record.pid, address: record.address, httpPort: record.httpPort, foreground: true };
  return null;
}

function readRecord(home: string): DevServerRecord | null {
  try {
    return parseDevServerRecord(JSON.parse(readFileSync(join(home, DEV_SERVER_FILES.record), 'utf8')));
  } catch {
    return null;
  }
}

/**
 * The session ids of open goals that stopping would halt: every goal on goalrun's own background dev
 * server, else (only the store stops) the store's goals on the configured server. Null when goalrun's
 * dev server does not say.
 */
async function openGoals(
  context: CliContext,
  server: OwnDevServer | null,
  storeRuns: boolean,
): Promise<string[] | null> {
  if (server && !server.foreground) {
    const reader = await ownServerReader(context, server);
    if (!reader) return null;
    const query = `WorkflowType = '${GOAL_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`;
    const listed = await reader.listWorkflows(query, GOALS_LOOKED_UP).catch(() => null);
    return listed ? listed.map((info) => sessionIdOf(info.workflowId)) : null;
  }
  if (!storeRuns) return [];
  // The store alone: its goals on whatever server the settings name (no server answering: none run).
  const reader = await context.temporalReader().catch(() => null);
  if (!reader) return [];
  const goals = await runningGoals(reader, await context.taskQueue()).catch(() => null);
  return goals ? goals.map((goal) => goal.sessionId) : null;
}

/** A reader of goalrun's own dev server: the configured one when it is that server, else its HTTP API. */
async function ownServerReader(context: CliContext, server: OwnDevServer): Promise<TemporalReader | null> {
  if (
    server.address &&
    normalizeAddress(server.address) === normalizeAddress(context.settings.temporalAddress)
  )
    return context.temporalReader().catch(() => null);
  if (!server.httpPort) return null;
  return new HttpTemporalReader({
    baseUrl: `http://127.0.0.1:${server.httpPort}`,
    namespace: context.settings.namespace,
    payloadKeys: context.payloadKeys(),
  });
}

/** The error of a down that would halt open goals: which, and what to do. */
function refusal(open: string[]): ConfigError {
  const named = open.slice(0, GOALS_NAMED).map((id) => `  ${shortIdOf(id)}  ${id}`);
  const more = open.length > GOALS_NAMED ? `\n  … and ${open.length - GOALS_NAMED} more` : '';
  const goals = open.length === 1 ? '1 goal is' : `${open.length} goals are`;
  return new ConfigError(
    `not stopping: ${goals} open (running, waiting or paused), and stopping the dev server and the store would halt ${open.length === 1 ? 'it' : 'them'} mid-step:\n` +
      `${named.join('\n')}${more}\n` +
      'cancel them (goalrun cancel <id>) or let them end; or pass --force: their state is kept, and they go on once the servers and a worker run again',
  );
}
