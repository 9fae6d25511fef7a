/**
 * The worker's log: one line per event. At `info` a line names the event and the few fields a person
 * reads (workflow, activity, attempt, error); at `debug` it carries every field. Task tokens never
 * appear: they are opaque, long, and let whoever holds one complete the task.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { LogEntry, LogLevel } from '@temporalio/worker';
import { terminalSafe } from '../core/text';

/** The levels `goalrun worker --log-level` accepts. */
export const WORKER_LOG_LEVELS = ['debug', 'info', 'warn'] as const;

/** A worker log level as the CLI spells it. */
export type WorkerLogLevel = (typeof WORKER_LOG_LEVELS)[number];

/** Fields that are never logged. */
const HIDDEN_FIELDS = new Set(['taskToken']);

/** Fields shown at info, in this order, under these short names. */
const INFO_FIELDS: ReadonlyArray<[field: string, label: string]> = [
  ['workflowId', 'workflow'],
  ['activityType', 'activity'],
  ['attempt', 'attempt'],
  ['taskQueue', 'queue'],
  ['state', 'state'],
  ['error', 'error'],
  ['failure', 'error'],
];

/** Where the log goes: a file (for `run`, whose terminal shows the goal) or stderr. */
export type WorkerLogTarget = { file: string; level?: WorkerLogLevel } | { level: WorkerLogLevel };

/** Options of installWorkerLogging. */
export interface WorkerLoggingOptions {
  /**
   * Whether the SDK shuts the worker down by itself on SIGINT/SIGTERM (true for `goalrun worker`).
   * The CLI's own commands handle signals themselves, so they pass false.
   */
  shutdownOnSignals?: boolean;
  /**
   * Where the SDK's Prometheus exporter listens (`127.0.0.1:<port>`): `goalrun worker --metrics-port`
   * serves it beside goalrun's counters (worker/metrics-endpoint.ts). No exporter when absent.
   */
  prometheusBindAddress?: string;
}

let installed = false;

/**
 * SDK warnings about what goalrun does on purpose, dropped from the log: its activity-only workers
 * (a foreground host's queue, the tools queue, the process's own queue) register no workflows.
 */
const EXPECTED_SDK_WARNINGS = new Set(['No workflows registered, not polling for workflow tasks']);

/**
 * Installs the Temporal runtime with goalrun's log format. Must run before the first connection;
 * a second call changes nothing (the runtime exists once per process).
 */
export function installWorkerLogging(target: WorkerLogTarget, options: WorkerLoggingOptions = {}): void {
  if (installed) return;
  installed = true;
  const level = target.level ?? 'info';
  const detailed = level === 'debug';
  let write: (line: string) => void;
  if ('file' in target) {
    write = fileLog(target.file);
  } else {
    // A stderr that is gone (a closed pipe) must not take the worker with it.
    process.stderr.on('error', () => {});
    write = (line) => process.stderr.write(`${line}\n`);
  }
  // Loaded here, not at the top: the CLI's light commands import this file for its constants, and
  // the SDK's worker package (native bridge, webpack, rxjs) is what makes a CLI start slow.
  const { DefaultLogger, Runtime } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  Runtime.install({
    logger: new DefaultLogger(sdkLevel(level), (entry) => {
      // Log lines carry model and tool text (failures, summaries): shown, never acted on by a terminal.
      if (!EXPECTED_SDK_WARNINGS.has(entry.message)) write(terminalSafe(formatLogEntry(entry, detailed)));
    }),
    ...(options.shutdownOnSignals === false ? { shutdownSignals: [] } : {}),
    telemetryOptions: {
      // The SDK core's own warnings come through the logger above. Without `forward` the core prints
      // them itself on stdout, where they broke `--json` output under load (a timestamped line first).
      logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
      ...(options.prometheusBindAddress
        ? { metrics: { prometheus: { bindAddress: options.prometheusBindAddress } } }
        : {}),
    },
  });
}

/**
 * Writes log lines to a file. A log that cannot be written (a full disk, a file turned read-only, a
 * device that refuses writes) must not stop the worker: without an 'error' listener the stream's
 * failure would crash the process and every goal it runs. It is said once on stderr, and the lines
 * after it are dropped.
 */
export function fileLog(
  file: string,
  say: (message: string) => void = defaultNotice,
): (line: string) => void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const stream = fs.createWriteStream(file, { flags: 'a' });
  let failed = false;
  stream.on('error', (err) => {
    if (failed) return;
    failed = true;
    say(`the worker log ${file} cannot be written (${err.message}); the worker goes on without it`);
  });
  return (line) => {
    if (!failed) stream.write(`${line}\n`);
  };
}

function defaultNotice(message: string): void {
  process.stderr.write(`goalrun: ${message}\n`);
}

/** One log line: time, level, message, then the fields (all of them when `detailed`). */
export function formatLogEntry(entry: LogEntry, detailed: boolean): string {
  const time = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const message = entry.message.replace(/\s*\n\s*/g, ' ');
  const fields = detailed ? allFields(entry.meta) : infoFields(entry.meta);
  return `${time} ${entry.level.padEnd(5)} ${message}${fields ? ` · ${fields}` : ''}`;
}

function sdkLevel(level: WorkerLogLevel): LogLevel {
  return level === 'debug' ? 'DEBUG' : level === 'warn' ? 'WARN' : 'INFO';
}

function infoFields(meta: Record<string, unknown> | undefined): string {
  if (!meta) return '';
  const parts: string[] = [];
  for (const [field, label] of INFO_FIELDS) {
    const value = meta[field];
    if (value === undefined || value === null || value === '') continue;
    // The first attempt is the normal case; only a retry is worth a word.
    if (field === 'attempt' && value === 1) continue;
    parts.push(`${label}=${shortValue(value)}`);
  }
  return parts.join(' ');
}

function allFields(meta: Record<string, unknown> | undefined): string {
  if (!meta) return '';
  return Object.entries(meta)
    .filter(([field, value]) => !HIDDEN_FIELDS.has(field) && value !== undefined)
    .map(([field, value]) => `${field}=${shortValue(value)}`)
    .join(' ');
}

/** A value on one line: errors by message, objects as compact JSON, strings quoted when they have spaces. */
function shortValue(value: unknown): string {
  if (value instanceof Error) return quoted(value.message);
  if (typeof value === 'string') return quoted(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'object' && value !== null) return safeJson(stripHidden(value));
  return String(value);
}

function quoted(text: string): string {
  const line = text.replace(/\s*\n\s*/g, ' ');
  return /[\s"]/.test(line) ? JSON.stringify(line) : line;
}

function stripHidden(value: object): unknown {
  if (Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([field]) => !HIDDEN_FIELDS.has(field)));
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, inner) => (typeof inner === 'bigint' ? inner.toString() : inner));
  } catch {
    return String(value);
  }
}
