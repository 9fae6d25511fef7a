/**
 * The CLI's side of traces (worker/telemetry.ts): the client's spans when an OTLP endpoint is set,
 * flushed before the process exits, and the `--trace-content` flag of the commands that host a worker.
 */
import type { Command } from 'commander';

type TelemetryModule = typeof import('../worker/telemetry');

/** worker/telemetry.ts, loaded only when an OTLP endpoint is configured (a light command loads nothing). */
export function telemetryModule(): TelemetryModule | null {
  const env = process.env;
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim())
    return null;
  return require('../worker/telemetry') as TelemetryModule;
}

/** The option `run`, `resume` and `worker` take; it reaches the worker as GOALRUN_TRACE_CONTENT=1. */
export function addTraceContentOption(command: Command): Command {
  return command
    .option(
      '--trace-content',
      'with OTEL_EXPORTER_OTLP_ENDPOINT: spans also carry message text and tool arguments and output (off: ids, names and token counts only)',
    )
    .hook('preAction', (_program, action) => {
      if (action.opts().traceContent) process.env.GOALRUN_TRACE_CONTENT = '1';
    });
}
