/**
 * The worker's one Prometheus endpoint (`goalrun worker --metrics-port [host:]port`): `/metrics`
 * serves goalrun's counters (worker/metrics.ts) followed by the Temporal SDK's runtime metrics
 * (workflow and activity task latencies, slots, pollers, sticky cache). The SDK's exporter listens
 * on a private loopback port of its own; this endpoint reads it on each scrape, so a scraper needs
 * one target per worker.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '../system/ports';
import { goalrunRegistry } from './metrics';

/** Host the endpoint binds to when `--metrics-port` names only a port: this machine only. */
export const DEFAULT_METRICS_HOST = '127.0.0.1';
/** How long a scrape waits for the SDK's exporter before serving goalrun's counters alone. */
const SDK_SCRAPE_TIMEOUT_MS = 2_000;

/** Where the endpoint listens, from `--metrics-port`: `9464`, `0.0.0.0:9464` or `[::1]:9464`. */
export function parseMetricsAddress(value: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]:|([^:]+):)?(\d+)$/.exec(value.trim());
  const port = Number(match?.[3]);
  if (!match || !Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`--metrics-port must be a port or host:port, got "${value}"`);
  }
  return { host: match[1] ?? match[2] ?? DEFAULT_METRICS_HOST, port };
}

/** A running metrics endpoint. */
export interface MetricsEndpoint {
  /** `http://host:port/metrics`. */
  url: string;
  /** Where the SDK's Prometheus exporter must bind (Runtime.install telemetryOptions). */
  sdkBindAddress: string;
  close(): Promise<void>;
}

/**
 * Starts the endpoint. Call it before the Temporal runtime is installed, and install the runtime
 * with `sdkBindAddress` (installWorkerLogging's `prometheusBindAddress`).
 */
export async function startMetricsEndpoint(address: {
  host: string;
  port: number;
}): Promise<MetricsEndpoint> {
  const sdkPort = await freeLoopbackPort();
  const sdkUrl = `http://127.0.0.1:${sdkPort}/metrics`;
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(path === '/' ? 200 : 404, { 'content-type': 'text/plain' });
      response.end(path === '/' ? 'goalrun worker metrics: GET /metrics\n' : 'not found\n');
      return;
    }
    scrape(sdkUrl).then(
      (text) => {
        response.writeHead(200, { 'content-type': goalrunRegistry.contentType });
        response.end(text);
      },
      (err: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain' });
        response.end(`metrics failed: ${(err as Error).message}\n`);
      },
    );
  });
  await listen(server, address);
  const { port } = server.address() as AddressInfo;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return {
    url: `http://${host}:${port}/metrics`,
    sdkBindAddress: `127.0.0.1:${sdkPort}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** goalrun's metrics, then the SDK's (or a comment saying why they are missing). */
async function scrape(sdkUrl: string): Promise<string> {
  const own = await goalrunRegistry.metrics();
  let sdk: string;
  try {
    const response = await fetch(sdkUrl, { signal: AbortSignal.timeout(SDK_SCRAPE_TIMEOUT_MS) });
    sdk = response.ok ? await response.text() : `${SDK_UNAVAILABLE}: HTTP ${response.status}\n`;
  } catch (err) {
    // Before the runtime is installed (or if it has no exporter) there is nothing to add.
    sdk = `${SDK_UNAVAILABLE}: ${(err as Error).message}\n`;
  }
  return `${own.endsWith('\n') ? own : `${own}\n`}${fullReplays(sdk)}${sdk}`;
}

const SDK_UNAVAILABLE = '# Temporal SDK metrics unavailable';
/** The SDK's counter of workflow tasks that found their run out of the cache. */
const STICKY_CACHE_MISS = /^temporal_sticky_cache_miss(?:_total)?(?:\{[^}]*\})?\s+([0-9.eE+-]+)\s*$/;

/**
 * goalrun_workflow_full_replays_total: how many workflow tasks replayed their goal from its first
 * event because it was not in the worker's cache (the SDK's sticky cache misses, summed), under a
 * name that says what it costs.
 */
export function fullReplays(sdkText: string): string {
  // Before its first miss the SDK may not list the counter: that is zero, once its metrics are served.
  if (sdkText.startsWith(SDK_UNAVAILABLE)) return '';
  let total = 0;
  for (const line of sdkText.split('\n')) {
    const match = STICKY_CACHE_MISS.exec(line);
    if (match) total += Number(match[1]);
  }
  return [
    '# HELP goalrun_workflow_full_replays_total Workflow tasks that replayed a goal from its first event (it was not in the cache).',
    '# TYPE goalrun_workflow_full_replays_total counter',
    `goalrun_workflow_full_replays_total ${total}`,
    '',
  ].join('\n');
}

function listen(server: Server, address: { host: string; port: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `cannot serve metrics on ${address.host}:${address.port}: ${err.code === 'EADDRINUSE' ? 'the port is in use' : err.message}`,
        ),
      ),
    );
    server.listen(address.port, address.host, () => {
      // A failure while serving (out of file descriptors) must not stop the worker: said, and ignored.
      server.on('error', (err) => process.stderr.write(`goalrun: metrics endpoint: ${err.message}\n`));
      resolve();
    });
  });
}

/** A loopback port that was free a moment ago (for the SDK's exporter, which cannot report one). */
function freeLoopbackPort(): Promise<number> {
  return freePort('127.0.0.1');
}
