import type { z } from 'zod';
import type { SandboxSettings } from '../../core/sandbox-settings';
import type { SessionStore } from '../../store/types';
import type { JobManager } from './jobs';

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
  /** The goal's sandbox settings; absent means DEFAULT_SANDBOX (workspace-write, no network). */
  sandbox?: SandboxSettings;
  /** A human approved running this one call outside the sandbox. */
  escalated?: boolean;
  /** For a background start: the job id the workflow assigned (`job-N`). */
  jobId?: string;
  /** The worker's processes (jobs, running commands); absent means the process-wide JobManager. */
  jobs?: JobManager;
}

/** A background job started by a call. */
export interface StartedJob {
  jobId: string;
  command: string;
  pid?: number;
}

/** What a tool produced. `output` is the full text; the caller spools and truncates it. */
export interface ToolOutcome {
  ok: boolean;
  output: string;
  /** True when the tool may have changed the workspace (counts as progress). */
  changedWorkspace: boolean;
  /** bash with run_in_background started this job. */
  job?: StartedJob;
  /** job-kill killed these jobs. */
  killedJobs?: string[];
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
