/**
 * What every command shares: settings, the Temporal client (starting a local dev server when none
 * answers), the session store, and a worker hosted in the CLI process for `run`, `resume`, `demo`.
 */

import path from 'node:path';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { describeStore, openStore } from '../store/open';
import type { SessionStore } from '../store/types';
import { loadSettings, type Settings } from '../worker/settings';
import { connectWorker, createGoalWorker, installWorkerLogging } from '../worker/worker';
import { ensureTemporalServer, isTemporalReachable } from './dev-server';
import { notice } from './output';

/** How long a command waits for a Temporal frontend that is supposed to be there. */
const TEMPORAL_PROBE_TIMEOUT_MS = 3_000;

/** A command's shared resources, opened lazily and closed once. */
export class CliContext {
  readonly settings: Settings;
  private client?: Client;
  private connection?: Connection;
  private store?: Promise<SessionStore>;
  private worker?: { worker: Worker; running: Promise<void> };

  constructor(settings: Settings = loadSettings()) {
    this.settings = settings;
  }

  /** The Temporal client; starts a local dev server first when none answers at a local address. */
  async temporal(): Promise<Client> {
    if (this.client) return this.client;
    const { temporalAddress, home, namespace } = this.settings;
    const result = await ensureTemporalServer({ address: temporalAddress, home, log: notice });
    if (result.started) {
      notice(`the dev server keeps running after this command; stop it with: kill ${result.pid ?? '<pid>'}`);
    }
    this.connection = await Connection.connect({ address: temporalAddress });
    this.client = new Client({ connection: this.connection, namespace });
    return this.client;
  }

  /** The Temporal client if a server answers, without starting one (for read-only commands). */
  async temporalIfRunning(): Promise<Client | null> {
    if (this.client) return this.client;
    if (!(await isTemporalReachable(this.settings.temporalAddress, TEMPORAL_PROBE_TIMEOUT_MS))) return null;
    this.connection = await Connection.connect({ address: this.settings.temporalAddress });
    this.client = new Client({ connection: this.connection, namespace: this.settings.namespace });
    return this.client;
  }

  /** The session store (PostgreSQL with DATABASE_URL, else the embedded PGlite store). */
  sessionStore(): Promise<SessionStore> {
    this.store ??= openStore({ databaseUrl: this.settings.databaseUrl, home: this.settings.home });
    return this.store;
  }

  /** A human description of the store, without credentials. */
  describeStore(): string {
    return describeStore({ databaseUrl: this.settings.databaseUrl, home: this.settings.home });
  }

  /** Starts a worker inside this process; its logs go to a file so the terminal shows the goal. */
  async hostWorker(): Promise<void> {
    if (this.worker) return;
    installWorkerLogging({ file: path.join(this.settings.home, 'logs', 'worker.log') });
    await this.temporal();
    const worker = await createGoalWorker({
      connection: await connectWorker(this.settings.temporalAddress),
      namespace: this.settings.namespace,
      taskQueue: this.settings.taskQueue,
      store: await this.sessionStore(),
      providerEnv: this.settings.providerEnv,
    });
    const running = worker.run();
    running.catch((err) => notice(`the in-process worker stopped: ${(err as Error).message}`));
    this.worker = { worker, running };
  }

  /** Stops the hosted worker (running activities get the grace time) and closes connections. */
  async close(): Promise<void> {
    if (this.worker) {
      if (this.worker.worker.getState() === 'RUNNING') this.worker.worker.shutdown();
      await this.worker.running.catch(() => undefined);
      this.worker = undefined;
    }
    await this.connection?.close().catch(() => undefined);
    if (this.store) await (await this.store.catch(() => null))?.close().catch(() => undefined);
  }
}

/** Whether an error says the workflow does not exist. */
export function isNotFound(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError || (err as { name?: string })?.name === 'WorkflowNotFoundError';
}
