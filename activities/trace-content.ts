/**
 * Whether goalrun's GenAI spans may carry what was said (`--trace-content`): message text, tool
 * arguments and output. Off by default: those are the user's code and data, and a tool's output
 * can hold anything the workspace does. Secrets never do either way: tool output is redacted before
 * it gets here, and provider keys are never part of a request's messages.
 */
import { trace } from '@opentelemetry/api';

let enabled = false;

/** Turns content on for this process (the worker's `--trace-content`, GOALRUN_TRACE_CONTENT=1). */
export function setTraceContent(on: boolean): void {
  enabled = on;
}

/** Whether spans may carry content. */
export function traceContentEnabled(): boolean {
  return enabled;
}

/**
 * Sets content attributes on the active span (the activity's GenAI span), when content is on. The
 * values are built only then: `build` is not called otherwise.
 */
export function recordTraceContent(build: () => Record<string, string>): void {
  if (!enabled) return;
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  span.setAttributes(build());
}
