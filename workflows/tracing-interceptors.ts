/**
 * The workflow interceptors of the bundle (worker/bundle.ts): Temporal's OpenTelemetry ones, so the
 * workflow's spans (RunWorkflow, StartActivity, signals and updates) join the client's trace and the
 * activities join the workflow's. Queries are left out: `run` and `watch` poll the state query
 * every second, which would drown the goal's spans. Spans leave the isolate through the `exporter`
 * sink, which a worker without an OTLP endpoint makes silent (worker/telemetry.ts); sinks are never
 * called during replay, so a replayed workflow exports nothing twice. Interceptors add no command.
 *
 * Only a run that was asked to be traced gets them (patch `traced-when-asked`): one whose start
 * carries a trace context, which a starter with an OTLP endpoint always sends. Each traced run built
 * its own tracer, context store and spans, and each cached goal kept them: at 100 goals about a
 * third of the worker's memory, for spans that a run started without tracing never exported. A run
 * started before the patch keeps the interceptors, so its replay is unchanged. The decision is made
 * once, when the run starts, and holds for the run (signals and activities alike).
 */
import type * as OpenTelemetryWorkflow from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type {
  ActivityInput,
  ContinueAsNewInput,
  GetLogAttributesInput,
  LocalActivityInput,
  Next,
  SignalInput,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { featuresOfThisRun } from './features';
import { PATCH } from './patches';

/** The header Temporal's OpenTelemetry interceptors carry a span context in. */
export const TRACE_HEADER = '_tracer-data';

type OtelModule = typeof OpenTelemetryWorkflow;

/** Traces everything Temporal's interceptor does except queries. */
function inboundWithoutQueries(otel: OtelModule): OpenTelemetryWorkflow.OpenTelemetryInboundInterceptor {
  class InboundWithoutQueries extends otel.OpenTelemetryInboundInterceptor {
    override handleQuery(
      ...args: Parameters<OpenTelemetryWorkflow.OpenTelemetryInboundInterceptor['handleQuery']>
    ) {
      const [input, next] = args;
      return next(input);
    }
  }
  return new InboundWithoutQueries();
}

/** One run's choice, made when it starts; the OpenTelemetry interceptors exist only if it traces. */
class RunTracing {
  private traced: boolean | undefined;
  inbound: OpenTelemetryWorkflow.OpenTelemetryInboundInterceptor | undefined;
  outbound: OpenTelemetryWorkflow.OpenTelemetryOutboundInterceptor | undefined;
  internals: OpenTelemetryWorkflow.OpenTelemetryInternalsInterceptor | undefined;

  /** Decides from the start's headers; asked first by `execute`, before any other call of the run. */
  decide(startHeaders: WorkflowExecuteInput['headers']): void {
    if (this.traced !== undefined) return;
    // A new run (or one with the patch's marker) traces only when asked; an older run always. Asked
    // as the goal itself asks, so the run's markers come in the same order and the goal's own
    // featuresOfThisRun, a moment later, gets the same answers and writes nothing more.
    const onlyWhenAsked = featuresOfThisRun()[PATCH.tracedWhenAsked];
    this.traced = !onlyWhenAsked || startHeaders[TRACE_HEADER] !== undefined;
    if (!this.traced) return;
    // Loaded only now: a run that does not trace never evaluates the tracing SDK in its context.
    const otel = require('@temporalio/interceptors-opentelemetry/lib/workflow') as OtelModule;
    this.inbound = inboundWithoutQueries(otel);
    this.outbound = new otel.OpenTelemetryOutboundInterceptor();
    this.internals = new otel.OpenTelemetryInternalsInterceptor();
  }
}

/** Hands each call to the OpenTelemetry inbound interceptor when the run traces. */
class InboundWhenTraced implements WorkflowInboundCallsInterceptor {
  constructor(private readonly run: RunTracing) {}

  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
    this.run.decide(input.headers);
    return this.run.inbound ? this.run.inbound.execute(input, next) : next(input);
  }
  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>) {
    return this.run.inbound ? this.run.inbound.handleSignal(input, next) : next(input);
  }
  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>) {
    return this.run.inbound ? this.run.inbound.handleUpdate(input, next) : next(input);
  }
  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>) {
    if (this.run.inbound) this.run.inbound.validateUpdate(input, next);
    else next(input);
  }
}

/** Hands each call to the OpenTelemetry outbound interceptor when the run traces. */
class OutboundWhenTraced implements WorkflowOutboundCallsInterceptor {
  constructor(private readonly run: RunTracing) {}

  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return this.run.outbound ? this.run.outbound.scheduleActivity(input, next) : next(input);
  }
  scheduleLocalActivity(
    input: LocalActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
  ) {
    return this.run.outbound ? this.run.outbound.scheduleLocalActivity(input, next) : next(input);
  }
  startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ) {
    return this.run.outbound ? this.run.outbound.startChildWorkflowExecution(input, next) : next(input);
  }
  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    return this.run.outbound ? this.run.outbound.continueAsNew(input, next) : next(input);
  }
  signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>) {
    return this.run.outbound ? this.run.outbound.signalWorkflow(input, next) : next(input);
  }
  getLogAttributes(
    input: GetLogAttributesInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>,
  ) {
    return this.run.outbound ? this.run.outbound.getLogAttributes(input, next) : next(input);
  }
}

/** The factory the SDK calls for every workflow run. */
export const interceptors = (): WorkflowInterceptors => {
  const run = new RunTracing();
  return {
    inbound: [new InboundWhenTraced(run)],
    outbound: [new OutboundWhenTraced(run)],
    internals: [
      {
        // A traced run's context store ends with the run.
        dispose(input, next) {
          // Caught: a promise left to reject would fail the workflow's tasks.
          if (run.internals) run.internals.dispose(input, next).catch(() => undefined);
          else next(input);
        },
      },
    ],
  };
};
