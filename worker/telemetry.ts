/**
 * Traces (issue 27 §5): OpenTelemetry spans of the client, the goal workflow and its activities,
 * through Temporal's OpenTelemetry interceptors, plus goalrun's own GenAI spans
 * (worker/genai-spans.ts, workflows/step-trace.ts), exported over OTLP/HTTP (JSON) to
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). With neither set nothing is
 * exported and the OpenTelemetry SDK is never loaded: only the workflow bundle carries the
 * interceptors always, so that turning traces on or off changes no build id.
 */
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { Sinks } from '@temporalio/workflow';
import { setTraceContent } from '../activities/trace-content';
import { genAiActivitySpans } from './genai-spans';
import { tracingRequested } from './tracing-env';

export { OTLP_ENDPOINT_ENV, OTLP_TRACES_ENDPOINT_ENV, tracingRequested } from './tracing-env';

/** `1`: span attributes may carry message text and tool arguments and output (`--trace-content`). */
export const TRACE_CONTENT_ENV = 'GOALRUN_TRACE_CONTENT';
/** The service name of goalrun's spans unless OTEL_SERVICE_NAME says otherwise. */
const SERVICE_NAME = 'goalrun';

/** What a traced process adds to its workers and clients. */
export interface Telemetry {
  /** The sinks the workflow's spans leave the isolate through. */
  sinks: InjectedSinks<Sinks>;
  /** Temporal's activity spans, then goalrun's GenAI spans inside them. */
  activityInterceptors: ActivityInterceptorsFactory[];
  /** For a Client: spans of starts, signals and updates (not of the status polls). */
  clientInterceptors(): { workflow: WorkflowClientInterceptor[] };
  /** Exports what is still buffered; call before the process exits. */
  shutdown(): Promise<void>;
}

let current: Telemetry | null | undefined;

/**
 * The process's telemetry, set up on first use: null when no endpoint is configured. With
 * `traceContent` (or GOALRUN_TRACE_CONTENT=1) GenAI spans also carry message text.
 */
export function processTelemetry(options: { traceContent?: boolean } = {}): Telemetry | null {
  if (options.traceContent || process.env[TRACE_CONTENT_ENV] === '1') setTraceContent(true);
  if (current !== undefined) return current;
  current = tracingRequested() ? startTelemetry() : null;
  return current;
}

/** How long a process about to exit waits for its last spans to be taken (a collector may be down). */
const FLUSH_TIMEOUT_MS = 5_000;

/** Exports what the process's telemetry still holds, for at most FLUSH_TIMEOUT_MS; nothing when traces are off. */
export async function flushTelemetry(): Promise<void> {
  if (!current) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, FLUSH_TIMEOUT_MS);
    timer.unref();
  });
  await Promise.race([current.shutdown().catch(() => undefined), timeout]);
  clearTimeout(timer);
}

/**
 * The sink the workflow's spans go to when traces are off: the bundle always has the interceptors,
 * and a sink call without a sink would be logged as an error on every workflow task.
 */
export function silentWorkflowSinks(): Telemetry['sinks'] {
  return { exporter: { export: { fn: () => undefined } } };
}

function startTelemetry(): Telemetry {
  // Loaded only now: a process without an endpoint never loads the SDK.
  const { AsyncLocalStorageContextManager } =
    require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const { BasicTracerProvider, BatchSpanProcessor } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { Resource } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const otel =
    require('@temporalio/interceptors-opentelemetry') as typeof import('@temporalio/interceptors-opentelemetry');

  const resource = new Resource({ 'service.name': process.env.OTEL_SERVICE_NAME?.trim() || SERVICE_NAME });
  const processor = new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  // Activities' spans nest through async calls only with a context manager that follows them.
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });

  /** Traces what a user does to a goal, not the CLI's polls of its status. */
  class StartsAndMessages extends otel.OpenTelemetryWorkflowClientInterceptor {
    override query(...args: Parameters<OpenTelemetryWorkflowClientInterceptor['query']>) {
      const [input, next] = args;
      return next(input);
    }
    override describe(...args: Parameters<OpenTelemetryWorkflowClientInterceptor['describe']>) {
      const [input, next] = args;
      return next(input);
    }
  }

  return {
    sinks: { exporter: otel.makeWorkflowExporter(processor, resource) } as unknown as Telemetry['sinks'],
    activityInterceptors: [
      (ctx) => ({
        inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx),
        outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
      }),
      genAiActivitySpans,
    ],
    clientInterceptors: () => ({ workflow: [new StartsAndMessages()] }),
    shutdown: () => provider.shutdown(),
  };
}
