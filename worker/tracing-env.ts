/**
 * Whether the environment asks for traces, as a leaf: the cache sizing and the CLI ask it without
 * loading telemetry.ts and what it imports.
 */

/** Where spans go; the exporter reads it (and the other OTEL_EXPORTER_OTLP_* settings) itself. */
export const OTLP_ENDPOINT_ENV = 'OTEL_EXPORTER_OTLP_ENDPOINT';
/** The traces-only endpoint, which wins over OTLP_ENDPOINT_ENV. */
export const OTLP_TRACES_ENDPOINT_ENV = 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT';

/** Whether the environment asks for traces. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env[OTLP_TRACES_ENDPOINT_ENV]?.trim() || env[OTLP_ENDPOINT_ENV]?.trim());
}
