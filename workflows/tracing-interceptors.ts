/**
 * The workflow interceptors of the bundle (worker/bundle.ts): Temporal's OpenTelemetry ones, so the
 * workflow's spans (RunWorkflow, StartActivity, signals and updates) join the client's trace and the
 * activities join the workflow's. Queries are left out: `run` and `watch` poll the state query
 * every second, which would drown the goal's spans. Spans leave the isolate through the `exporter`
 * sink, which a worker without an OTLP endpoint makes silent (worker/telemetry.ts); sinks are never
 * called during replay, so a replayed workflow exports nothing twice. Interceptors add no command.
 */
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type { WorkflowInterceptors } from '@temporalio/workflow';

/** Traces everything Temporal's interceptor does except queries. */
class InboundWithoutQueries extends OpenTelemetryInboundInterceptor {
  override handleQuery(...args: Parameters<OpenTelemetryInboundInterceptor['handleQuery']>) {
    const [input, next] = args;
    return next(input);
  }
}

/** The factory the SDK calls for every workflow run. */
export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new InboundWithoutQueries()],
  outbound: [new OpenTelemetryOutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
