/**
 * goalrun's GenAI spans around its activities, after the OpenTelemetry semantic conventions for
 * generative AI: `chat {model}` around a model step or a summary, `execute_tool {tool}` around a
 * workspace tool. Each runs inside Temporal's RunActivity span, so it belongs to the trace of its
 * goal step (workflows/step-trace.ts). Attributes are ids, names and counts only; the activities add
 * message text and tool arguments and output when `--trace-content` is on (activities/trace-content.ts).
 */
import { type Attributes, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context as ActivityContext } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import type { ModelStepInput, ModelStepResult, RunToolInput, RunToolResult } from '../activities/types';
import { parseModelSpec } from '../core/model-spec';
import type { RequestUsage } from '../core/usage';

/** The tracer of goalrun's own spans. */
const TRACER_NAME = 'goalrun';

/** The activity interceptor factory (WorkerOptions.interceptors.activity). */
export function genAiActivitySpans(ctx: ActivityContext): { inbound: ActivityInboundCallsInterceptor } {
  return { inbound: new GenAiActivitySpans(ctx) };
}

class GenAiActivitySpans implements ActivityInboundCallsInterceptor {
  constructor(private readonly ctx: ActivityContext) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>) {
    const [args] = input.args as [unknown];
    const described = describe(this.ctx.info.activityType, args, this.ctx.info.attempt);
    if (!described) return next(input);
    const tracer = trace.getTracer(TRACER_NAME);
    return tracer.startActiveSpan(
      described.name,
      { kind: described.kind, attributes: described.attributes },
      async (span) => {
        try {
          const result = await next(input);
          described.onResult(span, result);
          return result;
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR });
          // The failure's type names it (ProviderUnavailable, ToolFailed…); its message may quote a provider.
          span.setAttribute('error.type', errorType(err));
          throw err;
        } finally {
          span.end();
        }
      },
    );
  }
}

interface DescribedSpan {
  name: string;
  kind: SpanKind;
  attributes: Attributes;
  onResult(span: Span, result: unknown): void;
}

/** The span of an activity, or null for activities that are neither a model call nor a tool. */
export function describe(activityType: string, args: unknown, attempt: number): DescribedSpan | null {
  if (activityType === 'modelStep' || activityType === 'summarize') {
    const input = args as Pick<ModelStepInput, 'sessionId' | 'model'> & {
      stepNumber?: number;
      compaction?: number;
    };
    const { provider, model } = specParts(input.model);
    return {
      name: `chat ${model}`,
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': provider,
        'gen_ai.system': provider,
        'gen_ai.request.model': model,
        'gen_ai.conversation.id': input.sessionId,
        'goalrun.purpose': activityType === 'summarize' ? 'summary' : 'step',
        ...(input.stepNumber !== undefined ? { 'goalrun.step': input.stepNumber } : {}),
        ...(input.compaction !== undefined ? { 'goalrun.compaction': input.compaction } : {}),
        'goalrun.attempt': attempt,
      },
      onResult(span, result) {
        const answer = result as Partial<ModelStepResult> | null;
        const usage = answer?.usage ?? null;
        if (usage) span.setAttributes(usageAttributes(usage));
        if (answer?.finishReason) span.setAttribute('gen_ai.response.finish_reasons', [answer.finishReason]);
      },
    };
  }
  if (activityType === 'runTool') {
    const input = args as RunToolInput;
    return {
      name: `execute_tool ${input.toolName}`,
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': input.toolName,
        'gen_ai.tool.call.id': input.toolCallId,
        'gen_ai.tool.type': 'function',
        'gen_ai.conversation.id': input.sessionId,
        'goalrun.step': input.stepNumber,
        'goalrun.attempt': attempt,
      },
      onResult(span, result) {
        const done = result as Partial<RunToolResult> | null;
        if (done?.ok === false) {
          span.setAttribute('goalrun.tool.ok', false);
          span.setStatus({ code: SpanStatusCode.ERROR });
        } else if (done?.ok === true) span.setAttribute('goalrun.tool.ok', true);
      },
    };
  }
  return null;
}

/** A request's usage as GenAI attributes; the input count includes the cache's reads and writes. */
export function usageAttributes(usage: RequestUsage): Attributes {
  return {
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    'gen_ai.usage.cache_read.input_tokens': usage.cacheReadTokens,
    'gen_ai.usage.cache_creation.input_tokens': usage.cacheWriteTokens,
  };
}

function specParts(spec: string | undefined): { provider: string; model: string } {
  try {
    return parseModelSpec(spec ?? '');
  } catch {
    return { provider: 'unknown', model: spec ?? 'unknown' };
  }
}

function errorType(err: unknown): string {
  const type = (err as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && type) return type;
  return err instanceof Error ? err.name : 'Error';
}
