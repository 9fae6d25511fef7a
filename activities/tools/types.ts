import type { z } from 'zod';
import type { SessionStore } from '../../store/types';

/** What a tool needs from the activity that runs it. */
export interface ToolContext {
  /** Absolute path of the goal's workspace; tools resolve relative paths against it. */
  workspace: string;
  sessionId: string;
  toolCallId: string;
  /** Fires when the activity is cancelled (the goal was cancelled, or the worker shuts down). */
  signal: AbortSignal;
  /** Tells Temporal the tool is alive; long tools call it at least every few seconds. */
  heartbeat: (details?: unknown) => void;
  store: SessionStore;
}

/** What a tool produced. `output` is the full text; the caller spools and truncates it. */
export interface ToolOutcome {
  ok: boolean;
  output: string;
  /** True when the tool may have changed the workspace (counts as progress). */
  changedWorkspace: boolean;
}

/** A tool that runs as an activity. */
export interface ToolDefinition<Args = unknown> {
  name: string;
  description: string;
  /** Validates the model's arguments; its JSON Schema is what the model is shown. */
  schema: z.ZodType<Args>;
  /** A short one-line description of a call, for the Web UI and the CLI (`bash: npm test`). */
  summarize(args: Args): string;
  run(args: Args, context: ToolContext): Promise<ToolOutcome>;
}
