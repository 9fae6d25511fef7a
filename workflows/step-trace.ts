/**
 * One trace per goal step: each step runs inside an `invoke_agent goalrun` span that starts a trace
 * of its own (linked to the workflow's span), so the step's model call (`chat {model}`), its tools
 * (`execute_tool {tool}`) and the Temporal spans between them share one trace, however long the goal
 * runs. Deterministic: span ids come from the workflow's seeded random and times from its clock, so
 * a replay rebuilds the same span, and the sink drops what a replay ends (nothing is exported twice).
 * Without an exporter the span goes nowhere; it adds no command either way.
 */
import { type Attributes, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { GoalRun } from './goal-run-port';

/** Runs one step inside its `invoke_agent` span. */
export function tracedStep<T>(run: GoalRun, step: () => Promise<T>): Promise<T> {
  const workflowSpan = trace.getActiveSpan()?.spanContext();
  const before = run.state.usage;
  const attributes: Attributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'goalrun',
    'gen_ai.conversation.id': run.state.goal.sessionId,
    'gen_ai.request.model': run.state.goal.model,
    'goalrun.step': run.state.steps + 1,
    'goalrun.iteration': run.state.iteration,
    'goalrun.execution': run.execution,
  };
  return trace.getTracer('goalrun').startActiveSpan(
    'invoke_agent goalrun',
    {
      root: true,
      kind: SpanKind.INTERNAL,
      attributes,
      links: workflowSpan ? [{ context: workflowSpan }] : [],
    },
    async (span) => {
      try {
        return await step();
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw err;
      } finally {
        const after = run.state.usage;
        span.setAttributes({
          'gen_ai.usage.input_tokens': after.inputTokens - before.inputTokens,
          'gen_ai.usage.output_tokens': after.outputTokens - before.outputTokens,
          'gen_ai.usage.cache_read.input_tokens': after.cacheReadTokens - before.cacheReadTokens,
          'gen_ai.usage.cache_creation.input_tokens': after.cacheWriteTokens - before.cacheWriteTokens,
        });
        span.end();
      }
    },
  );
}
