/**
 * The headless event stream (`--output-format stream-json`): one JSON object per line, in the order
 * things happened, as `claude -p --output-format stream-json` and `codex exec --json` print them.
 * The schemas are the contract: docs/events.md is generated from them (scripts/generate-events-doc.js)
 * and a test parses every line a real goal prints with them.
 */
import { z } from 'zod';
import { clipHeadBytes } from './text';

/** Longest tool arguments or tool output carried in an event; the full text is in the store. */
export const STREAM_TEXT_MAX_BYTES = 2048;

const base = {
  /** The session the event belongs to. */
  session_id: z.string(),
  /** Position in the session's event log: pick a stream up after it with `watch --after N`. */
  cursor: z.number().int(),
};

const usageShape = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cache_read_tokens: z.number().int(),
  cache_write_tokens: z.number().int(),
  /** Cache reads as a share of input_tokens (0 to 1, 4 places); 0 without input. */
  cache_read_share: z.number(),
});

/** Every event type, with what it carries. */
export const STREAM_EVENT_SCHEMAS = {
  init: z
    .object({
      ...base,
      type: z.literal('init'),
      workflow_id: z.string(),
      model: z.string(),
      workspace: z.string(),
      objective: z.string(),
      limits: z.object({ max_steps: z.number(), max_iterations: z.number(), max_minutes: z.number() }),
      /**
       * The session's status when the stream began. Every stream opens with an init that has it:
       * the goal's own (a run, a resume: `running`, the execution having just started, however far it
       * got before the stream caught up) or one describing the session as it is now, whose cursor is
       * the one the stream starts after. A later init (an execution that started) has none.
       */
      status: z.string().optional(),
    })
    .describe(
      'Every stream opens with one: the session as it is now (status included; `running` for the `run` or `resume` that started it); later ones mark an execution that started (a resume).',
    ),
  step_start: z
    .object({ ...base, type: z.literal('step_start'), step: z.number().int(), model: z.string() })
    .describe('A model step begins.'),
  text_delta: z
    .object({
      ...base,
      type: z.literal('text_delta'),
      step: z.number().int(),
      /** The attempt of the step's model call: a retried call streams its text again from the start. */
      attempt: z.number().int(),
      /** Where `text` starts in the attempt's text (UTF-16 code units): a gap means a piece was lost. */
      offset: z.number().int(),
      text: z.string(),
    })
    .describe(
      "With `--include-partial-messages` only: a piece of the model's text as it streams in, in order. The pieces of the attempt that answered add up to the step's `assistant_text`, which stays the only record (deltas are best-effort, kept a short while, never in the transcript; a new `attempt` starts over).",
    ),
  assistant_text: z
    .object({ ...base, type: z.literal('assistant_text'), step: z.number().int(), text: z.string() })
    .describe(
      'What the model said in a step (its final text; streamed deltas are never stored in the transcript).',
    ),
  tool_call: z
    .object({
      ...base,
      type: z.literal('tool_call'),
      step: z.number().int(),
      tool_call_id: z.string(),
      name: z.string(),
      summary: z.string(),
      /** JSON of the arguments, cut to STREAM_TEXT_MAX_BYTES. */
      arguments: z.string(),
      arguments_truncated: z.boolean(),
    })
    .describe('The model called a tool.'),
  tool_result: z
    .object({
      ...base,
      type: z.literal('tool_result'),
      tool_call_id: z.string(),
      name: z.string(),
      ok: z.boolean(),
      /** The start of the output, cut to STREAM_TEXT_MAX_BYTES. */
      output: z.string(),
      bytes: z.number().int(),
      spool_id: z.number().int().nullable(),
    })
    .describe('A tool call finished; read the whole output with tool-output or `goalrun transcript --full`.'),
  task_update: z
    .object({
      ...base,
      type: z.literal('task_update'),
      tasks: z.array(
        z.object({
          id: z.string(),
          content: z.string(),
          status: z.string(),
          blocked_by: z.array(z.string()),
          ready: z.boolean(),
        }),
      ),
    })
    .describe('The task list (todo-write) changed; the whole list, in dependency order.'),
  compaction: z
    .object({
      ...base,
      type: z.literal('compaction'),
      before_tokens: z.number().int(),
      after_tokens: z.number().int(),
      kind: z.enum(['auto', 'manual', 'forced', 'recovery']),
      text: z.string(),
    })
    .describe('The context was compacted.'),
  notice: z
    .object({ ...base, type: z.literal('notice'), text: z.string() })
    .describe(
      'A note of goalrun: failure budget, pause, limits, a model switch, an app command, a hook that said no or failed, the workspace context (instructions cut by the cap, an MCP server that failed).',
    ),
  steering: z
    .object({ ...base, type: z.literal('steering'), id: z.string(), from: z.string(), text: z.string() })
    .describe('A steering message was delivered to the model.'),
  approval: z
    .object({
      ...base,
      type: z.literal('approval'),
      tool_call_id: z.string(),
      command: z.string(),
      decision: z.enum(['requested', 'approved', 'denied']),
      reason: z.string().nullable(),
      by: z.string().nullable(),
    })
    .describe('A command asked to run outside the sandbox, and what was decided.'),
  usage: z
    .object({
      ...base,
      type: z.literal('usage'),
      step: z.number().int(),
      model: z.string(),
      ...usageShape.shape,
    })
    .describe("One model request's usage, as the provider reported it."),
  budget: z
    .object({
      ...base,
      type: z.literal('budget'),
      at: z.enum(['cap', 'raised']),
      cap: z.enum(['cost', 'tokens']).nullable(),
      reason: z.string().nullable(),
      spent_usd: z.number(),
      reserved_usd: z.number(),
      cap_usd: z.number().nullable(),
      spent_tokens: z.number().int(),
      reserved_tokens: z.number().int(),
      cap_tokens: z.number().int().nullable(),
    })
    .describe(
      'The goal reached its money or token cap and waits (`at: cap`, status budget_reached), or a raise let it go on (`at: raised`).',
    ),
  failover: z
    .object({
      ...base,
      type: z.literal('failover'),
      step: z.number().int(),
      from: z.string(),
      to: z.string(),
      direction: z.enum(['backup', 'probe', 'primary']),
      reason: z.string(),
    })
    .describe(
      'The goal moved to its backup model (`direction: backup`, after provider failures in a row or a long outage), a step probes the primary after the cooldown (`probe`), or the probe succeeded and the goal is back (`primary`).',
    ),
  result: z
    .object({
      ...base,
      type: z.literal('result'),
      status: z.string(),
      reason: z.string().nullable(),
      summary: z.string().nullable(),
      steps: z.number().int(),
      iterations: z.number().int(),
      duration_ms: z.number(),
      total_cost_usd: z.number(),
      usage: usageShape.extend({ total_tokens: z.number().int(), requests: z.number().int() }),
      verified: z
        .boolean()
        .describe('true when the goal ended completed and every check (`--verify`) passed; false otherwise'),
      checks: z
        .array(
          z.object({
            command: z.string(),
            exit_code: z.number().int().nullable(),
            ok: z.boolean(),
            problem: z.string().nullable(),
            spool: z.string().nullable(),
          }),
        )
        .describe(
          'The checks of the last finish that ran them: exit code (null: killed or never started), the spool reference of the output',
        ),
    })
    .describe('The goal ended: the same facts as `status --json`.'),
} as const;

/** The type names, in the order the docs list them. */
export const STREAM_EVENT_TYPES = Object.keys(STREAM_EVENT_SCHEMAS) as Array<
  keyof typeof STREAM_EVENT_SCHEMAS
>;

/** Any stream event. */
export const streamEventSchema = z.discriminatedUnion('type', [
  STREAM_EVENT_SCHEMAS.init,
  STREAM_EVENT_SCHEMAS.step_start,
  STREAM_EVENT_SCHEMAS.text_delta,
  STREAM_EVENT_SCHEMAS.assistant_text,
  STREAM_EVENT_SCHEMAS.tool_call,
  STREAM_EVENT_SCHEMAS.tool_result,
  STREAM_EVENT_SCHEMAS.task_update,
  STREAM_EVENT_SCHEMAS.compaction,
  STREAM_EVENT_SCHEMAS.notice,
  STREAM_EVENT_SCHEMAS.steering,
  STREAM_EVENT_SCHEMAS.approval,
  STREAM_EVENT_SCHEMAS.usage,
  STREAM_EVENT_SCHEMAS.budget,
  STREAM_EVENT_SCHEMAS.failover,
  STREAM_EVENT_SCHEMAS.result,
]);

/** One line of `--output-format stream-json`. */
export type StreamEvent = z.infer<typeof streamEventSchema>;

/** Cuts a text to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function clipBytes(
  text: string,
  maxBytes = STREAM_TEXT_MAX_BYTES,
): { text: string; truncated: boolean } {
  if (utf8Length(text) <= maxBytes) return { text, truncated: false };
  return { text: clipHeadBytes(text, maxBytes), truncated: true };
}

const encoder = new TextEncoder();

function utf8Length(text: string): number {
  return encoder.encode(text).length;
}
