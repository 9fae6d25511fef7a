/**
 * What every command shares: settings, the Temporal client (starting a local dev server when none
 * answers at an address goalrun may serve), a reader of Temporal for the read-only commands (HTTP
 * when an HTTP API is known, else the client), the session store and its task queue, and a worker
 * hosted in the CLI process for `run`, `resume`, `demo`.
 */

import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { ConfigError } from '../core/errors';
import { plural } from '../core/text';
import { HOST_SIGNAL_NAME, workflowIdOf } from '../core/workflow-names';
import { describeStore, openStore } from '../store/open';
import type { SessionStore } from '../store/types';
import { TemporalConnectionError } from '../worker/connection-errors';
import { goalrunDataConverter } from '../worker/data-converter';
import { installWorkerLogging } from '../worker/logging';
import { machineCacheSizing } from '../worker/machine-memory';
import { loadPayloadKeys, type PayloadKey } from '../worker/payload-keys';
import { knownSecrets } from '../worker/secrets';
import { loadSettings, type Settings, taskQueueForStore, temporalHttpBaseUrl } from '../worker/settings';
import { isSecured } from '../worker/temporal-connection';
import type { GoalWorker } from '../worker/worker';
import { recordedHttpPort } from './dev-server-record';
import { markHostingWorker, notice } from './output';
import { isTemporalReachable, parseTemporalAddress } from './temporal-address';
import { HttpTemporalReader, httpAccessOf, isHttpApiReachable } from './temporal-http';
import { readerOf, type TemporalReader } from './temporal-reader';
import { telemetryModule } from './tracing';

// The worker (activities, providers, the AI SDK, the SDK's native worker) loads only when this
// process hosts one, and the gRPC client only when a command needs more than the HTTP API reads:
// the other commands stay light (issue 10).
const workerModule = (): typeof import('../worker/worker') => require('../worker/worker');
const clientModule = (): typeof import('@temporalio/client') => require('@temporalio/client');
const devServerModule = (): typeof import('./dev-server') => require('./dev-server');
const devServerStartModule = (): typeof import('./dev-server-start') => require('./dev-server-start');
const connectModule = (): typeof import('../worker/temporal-connect') =>
  require('../worker/temporal-connect');

/** How long a command waits for a Temporal frontend that is supposed to be there. */
const TEMPORAL_PROBE_TIMEOUT_MS = 3_000;

/**
 * Settings for a command run on a workspace (default: the current directory), its project config
 * included; `profile` is `--profile`, the temporal.toml profile to connect with.
 */
export function settingsFor(workspace?: string, profile?: string): Settings {
  return loadSettings(process.env, workspace ?? process.cwd(), { profile });
}

/** A command's shared resources, opened lazily and closed once. */
export class CliContext {
  readonly settings: Settings;
  private client?: Client;
  private connection?: Connection;
  private reader?: Promise<TemporalReader | null>;
  private store?: Promise<SessionStore>;
  private queue?: Promise<string>;
  private worker?: {
    worker: GoalWorker;
    running: Promise<void>;
    hostQueue?: string;
    hostedSessionId?: string;
  };
  private queueFromFlag = false;
  private keys?: PayloadKey[];

  constructor(settings: Settings = settingsFor()) {
    this.settings = settings;
  }

  /** Uses this task queue instead of the store's (the `--task-queue` flag). */
  overrideTaskQueue(taskQueue: string | undefined): void {
    if (taskQueue === undefined || taskQueue.trim() === '') return;
    this.settings.taskQueueOverride = taskQueue.trim();
    this.queueFromFlag = true;
    this.queue = undefined;
  }

  /**
   * The Temporal client. Starts a local dev server first when none answers, but only at the default
   * address or the one `goalrun dev` recorded: anywhere else a silent start would hide a typo. Never
   * for a connection with TLS or an API key (a dev server has neither): that one is connected as is,
   * and a failure names its cause.
   */
  async temporal(): Promise<Client> {
    if (this.client) return this.client;
    if (isSecured(this.settings.temporal)) return this.connect();
    const { temporalAddress, home } = this.settings;
    const { mayStartDevServerAt } = devServerModule();
    const result = await devServerStartModule()
      .ensureTemporalServer({
        address: temporalAddress,
        home,
        log: notice,
        mayStart: mayStartDevServerAt(temporalAddress, home),
      })
      .catch(async (err: unknown) => {
        // A server that answers but not in plain gRPC may want TLS: say so rather than "nothing answers".
        const explained = await connectModule().explainConnectionFailure(err, this.settings.temporal);
        throw explained instanceof TemporalConnectionError ? explained : err;
      });
    if (result.started) {
      notice(
        `the dev server (pid ${result.pid ?? '?'}) keeps running after this command; goalrun down stops it and the embedded store`,
      );
    }
    return this.connect();
  }

  /**
   * The Temporal client if a server answers, without starting one. With TLS or an API key, only a
   * server that does not answer at all is "not running": a refused certificate or key is an error.
   */
  async temporalIfRunning(): Promise<Client | null> {
    if (this.client) return this.client;
    if (isSecured(this.settings.temporal)) {
      return this.connect().catch((err: unknown) => {
        if (connectModule().isUnreachable(err)) return null;
        throw err;
      });
    }
    if (!(await isTemporalReachable(this.settings.temporalAddress, TEMPORAL_PROBE_TIMEOUT_MS))) return null;
    return this.connect();
  }

  /**
   * What the read-only commands read Temporal through, without starting a server: the HTTP API
   * when one is known (TEMPORAL_HTTP_ADDRESS, or the dev server goalrun started for this address)
   * and answers, else the gRPC client; null when no server answers.
   */
  temporalReader(): Promise<TemporalReader | null> {
    this.reader ??= this.openReader();
    return this.reader;
  }

  /** Starts opening the reader now, so that it overlaps with opening the store; errors surface when it is used. */
  prepareTemporalReader(): void {
    this.temporalReader().catch(() => undefined);
  }

  private async openReader(): Promise<TemporalReader | null> {
    if (this.client) return readerOf(this.client);
    const baseUrl = this.httpBaseUrl();
    const access = baseUrl ? httpAccessOf(this.settings.temporal, baseUrl) : undefined;
    if (baseUrl && (await isHttpApiReachable(baseUrl, TEMPORAL_PROBE_TIMEOUT_MS, access))) {
      return new HttpTemporalReader({
        baseUrl,
        namespace: this.settings.namespace,
        payloadKeys: this.payloadKeys(),
        access,
      });
    }
    const client = await this.temporalIfRunning();
    return client ? readerOf(client) : null;
  }

  /** The HTTP API of the configured server, if goalrun knows one (https by default with TLS on). */
  private httpBaseUrl(): string | null {
    const { temporalHttpAddress, temporalAddress, home } = this.settings;
    const secured = isSecured(this.settings.temporal);
    if (temporalHttpAddress) {
      const baseUrl = temporalHttpBaseUrl(temporalHttpAddress, this.settings.temporal.tls ? 'https' : 'http');
      if (!baseUrl) {
        throw new ConfigError(
          `TEMPORAL_HTTP_ADDRESS (or temporal_http_address) "${temporalHttpAddress}" is neither host:port nor an http(s) URL`,
        );
      }
      return baseUrl;
    }
    // The dev servers goalrun starts have neither TLS nor keys.
    if (secured) return null;
    const port = recordedHttpPort(home, temporalAddress);
    if (port === null) return null;
    const { host } = parseTemporalAddress(temporalAddress);
    return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  }

  private async connect(): Promise<Client> {
    const { Client } = clientModule();
    this.connection = await connectModule().connectClient(this.settings.temporal);
    // With an OTLP endpoint, starts, signals and updates are spans the goal's trace begins with.
    const telemetry = telemetryModule()?.processTelemetry();
    this.client = new Client({
      connection: this.connection,
      namespace: this.settings.namespace,
      dataConverter: goalrunDataConverter(this.payloadKeys()),
      ...(telemetry ? { interceptors: telemetry.clientInterceptors() } : {}),
    });
    return this.client;
  }

  /**
   * The payload encryption keys (GOALRUN_PAYLOAD_KEYS, else the config's payload_keys_file; none:
   * payloads are sent plain). Read when first needed: a command that never talks to Temporal does
   * not fail on a bad key.
   */
  payloadKeys(): PayloadKey[] {
    this.keys ??= loadPayloadKeys(process.env, this.settings.config.payload_keys_file);
    return this.keys;
  }

  /** The session store (PostgreSQL with DATABASE_URL, else the embedded PostgreSQL store shared by every goalrun process). */
  sessionStore(): Promise<SessionStore> {
    this.store ??= openStore({ databaseUrl: this.settings.databaseUrl, home: this.settings.home });
    return this.store;
  }

  /**
   * The task queue of this store's goals: `--task-queue`, GOALRUN_TASK_QUEUE or the config's
   * task_queue, else one derived from the store's identity, so two stores never share workers.
   */
  taskQueue(): Promise<string> {
    const override = this.settings.taskQueueOverride;
    if (override) return Promise.resolve(override);
    this.queue ??= this.sessionStore().then(async (store) => taskQueueForStore(await store.storeId()));
    return this.queue;
  }

  /** How to start a worker that polls this context's task queue (for "no worker is polling" advice). */
  workerHint(): string {
    // A queue from the environment or config reaches `goalrun worker` the same way; a flag does not.
    return this.queueFromFlag
      ? `goalrun worker --task-queue ${this.settings.taskQueueOverride}`
      : 'goalrun worker';
  }

  /** The secret values this process knows (provider keys, database passwords), to redact from output. */
  knownSecrets(): string[] {
    return knownSecrets(this.settings);
  }

  /** A human description of the store, without credentials. */
  describeStore(): string {
    return describeStore({ databaseUrl: this.settings.databaseUrl, home: this.settings.home });
  }

  /** Whether this process hosts a worker. */
  get hostsWorker(): boolean {
    return this.worker !== undefined;
  }

  /**
   * The queue of this process's own goal when it hosts a worker (goal.hostQueue): that goal's calls
   * come here, and this process takes no other goal's calls.
   */
  get hostQueue(): string | undefined {
    return this.worker?.hostQueue;
  }

  /** The goal this process hosts: on the way out it gives it back to the store's workers at once. */
  hostsGoal(sessionId: string): void {
    if (this.worker) this.worker.hostedSessionId = sessionId;
  }

  /**
   * Starts a worker inside this process; its logs go to a file so the terminal shows the goal. By
   * default it runs only the goal this process starts or resumes (`exclusive`); a goal of a build from
   * before 0.2.0, which cannot be given a host, needs a worker that takes any call of the store.
   */
  async hostWorker(options: { exclusive?: boolean } = {}): Promise<void> {
    if (this.worker) return;
    // First: a GOALRUN_WORKER_MAX_MEMORY that is no size is exit 2 before anything starts.
    const cache = machineCacheSizing();
    const exclusive = options.exclusive !== false;
    // The CLI handles Ctrl-C itself (stop following, then shut the worker down gracefully).
    installWorkerLogging(
      { file: path.join(this.settings.home, 'logs', 'worker.log') },
      { shutdownOnSignals: false },
    );
    await this.temporal();
    const { connectWorker, createGoalWorker } = workerModule();
    const taskQueue = await this.taskQueue();
    const hostQueue = exclusive ? `${taskQueue}@run-${process.pid}-${randomUUID().slice(0, 8)}` : undefined;
    const worker = await createGoalWorker({
      connection: await connectWorker(this.settings.temporal),
      namespace: this.settings.namespace,
      taskQueue,
      store: await this.sessionStore(),
      providerEnv: this.settings.providerEnv,
      secrets: this.knownSecrets(),
      hostQueue,
      payloadKeys: this.payloadKeys(),
      notify: this.settings.config.notify,
      cache,
    });
    markHostingWorker();
    const running = worker.run();
    running.catch((err) => notice(`the in-process worker stopped: ${(err as Error).message}`));
    this.worker = { worker, running, hostQueue };
  }

  /** Stops a hosted worker at once (to start another kind); nothing may be running on it yet. */
  async dropWorker(): Promise<void> {
    if (!this.worker) return;
    const { worker, running } = this.worker;
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch(() => undefined);
    this.worker = undefined;
  }

  /**
   * Stops the hosted worker gracefully: it polls no more, lets running tool and model calls finish
   * within the grace time, and hands back (fails for a retry elsewhere) what is still running then.
   * Then closes connections and the store.
   */
  async close(): Promise<void> {
    if (this.worker) {
      const { worker, running, hostedSessionId } = this.worker;
      if (hostedSessionId) await this.giveBack(hostedSessionId);
      if (worker.getState() === 'RUNNING') {
        const inFlight = worker.getStatus().numInFlightActivities;
        if (inFlight > 0) {
          notice(
            `stopping the in-process worker: waiting up to ${workerModule().SHUTDOWN_GRACE_TIME} for ${plural(inFlight, 'running call')} to finish; ` +
              'whatever still runs then is handed back to Temporal for the next worker (Ctrl-C again to stop now)',
          );
        }
        worker.shutdown();
      }
      await running.catch(() => undefined);
      this.worker = undefined;
    }
    await this.connection?.close().catch(() => undefined);
    if (this.store) await (await this.store.catch(() => null))?.close().catch(() => undefined);
    // The spans still buffered (the worker's last steps, the client's) go out before the process does.
    await telemetryModule()?.flushTelemetry();
  }

  /** Gives a hosted goal's steps back to the store's workers (a signal: nothing to wait for). */
  private async giveBack(sessionId: string): Promise<void> {
    try {
      const client = await this.temporal();
      await client.workflow
        .getHandle(workflowIdOf(sessionId))
        .signal(HOST_SIGNAL_NAME, { queue: null, from: 'goalrun run (stopping)' });
    } catch {
      // The goal has ended, or Temporal is gone: its calls fall back to the shared queue by themselves.
    }
  }
}
