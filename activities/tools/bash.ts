/**
 * The `bash` tool: runs a shell command in the workspace, inside the goal's sandbox, in its own
 * process group so that a timeout or a cancellation can kill everything the command started. With
 * `run_in_background` it starts a job instead; with `job_id` it reads a job's output.
 */
import { stat } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import {
  BASH_DEFAULT_TIMEOUT_MS,
  BASH_HEARTBEAT_INTERVAL_MS,
  BASH_KILL_GRACE_MS,
  BASH_MAX_TIMEOUT_MS,
  BASH_OUTPUT_CAP_BYTES,
  JOB_OUTPUT_DEFAULT_LIMIT,
} from '../../core/limits';
import { DEFAULT_RESOURCE_LIMITS, DEFAULT_SANDBOX } from '../../core/sandbox-settings';
import { clip } from '../../core/text';
import { TOOL } from '../../core/tool-names';
import { type LaunchSpec, prepareLaunch } from '../sandbox/launch';
import { CPU_LIMIT_SIGNAL, type LimitHit, limitMessage } from '../sandbox/resource-limits';
import { HeadTailBuffer } from './head-tail-buffer';
import { readJobOutput, startBackgroundJob } from './job-tools';
import { KILLED_BY_SHUTDOWN_MESSAGE, processJobManager, shuttingDownFailure } from './jobs';
import { type ProcessExit, ToolProcess } from './tool-process';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';

/** How long to wait for the output pipes to close once the group is gone (a process that left the group may hold them). */
const PIPE_CLOSE_WAIT_MS = 500;
/** The fallback waits above must not keep a shutting-down worker alive on their own. */
const UNREF = { ref: false };
/** Exit codes above this mean death by signal (code - 128). */
const SIGNAL_EXIT_BASE = 128;
/** Longest command text shown by summarize. */
const SUMMARY_MAX_CHARS = 60;

export const bashArgs = z
  .object({
    command: z
      .string()
      .min(1)
      .optional()
      .describe('The shell command to run with `bash -c`, in the workspace directory.'),
    timeout_ms: z
      .number()
      .int()
      .positive()
      .max(BASH_MAX_TIMEOUT_MS)
      .optional()
      .describe(
        `Time limit in milliseconds (default ${BASH_DEFAULT_TIMEOUT_MS}, at most ${BASH_MAX_TIMEOUT_MS}); not for background jobs.`,
      ),
    description: z
      .string()
      .optional()
      .describe('A few words on what the command is for, e.g. "run the unit tests".'),
    run_in_background: z
      .boolean()
      .optional()
      .describe(
        'Start the command as a background job (a dev server, a watch build) and return its job id at once.',
      ),
    job_id: z
      .string()
      .min(1)
      .optional()
      .describe('Instead of running a command: read the output of this background job (like job-output).'),
    offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('With job_id: the byte offset to read the job output from (next_offset of the last read).'),
    sandbox_permissions: z
      .enum(['use_default', 'require_escalated'])
      .optional()
      .describe(
        'require_escalated asks a human to run this one command outside the sandbox (give a justification); default use_default.',
      ),
    justification: z
      .string()
      .optional()
      .describe('With require_escalated: why the command cannot run inside the sandbox.'),
  })
  .superRefine((args, context) => {
    if (args.command === undefined && args.job_id === undefined) {
      context.addIssue({
        code: 'custom',
        message: 'give command (to run) or job_id (to read a job)',
        path: ['command'],
      });
    }
    if (args.command !== undefined && args.job_id !== undefined) {
      context.addIssue({ code: 'custom', message: 'give command or job_id, not both', path: ['job_id'] });
    }
    if (args.offset !== undefined && args.job_id === undefined) {
      context.addIssue({ code: 'custom', message: 'offset only applies with job_id', path: ['offset'] });
    }
  });

/** Arguments of the bash tool. */
export type BashArgs = z.infer<typeof bashArgs>;

/** Knobs tests turn down; the tool itself always uses the defaults from core/limits. */
export interface BashRunOptions {
  outputCapBytes?: number;
  killGraceMs?: number;
}

/** The error a cancelled command rejects with: the signal's own reason (Temporal's CancelledFailure) when it has one. */
function cancellationError(signal: AbortSignal): Error {
  if (signal.reason instanceof Error) return signal.reason;
  const error = new Error('bash command cancelled; process group killed');
  error.name = 'AbortError';
  return error;
}

/** One line for the UI: `bash: <first line of the command>`, or the job it reads. */
export function summarizeBash(args: BashArgs): string {
  if (args.command === undefined) return `bash: read ${args.job_id ?? 'job'} output`;
  const firstLine = args.command.trimStart().split('\n', 1)[0].trimEnd();
  const shown = clip(firstLine, SUMMARY_MAX_CHARS);
  return `bash${args.run_in_background ? ' &' : ''}: ${shown}`;
}

/** Runs a bash call: a command, a background start, or a read of a job's output. */
export async function runBash(
  args: BashArgs,
  context: ToolContext,
  options: BashRunOptions = {},
): Promise<ToolOutcome> {
  if (args.job_id !== undefined) {
    return readJobOutput(context, args.job_id, args.offset ?? 0, JOB_OUTPUT_DEFAULT_LIMIT);
  }
  const command = args.command as string;
  const note =
    args.sandbox_permissions === 'require_escalated' && !context.escalated
      ? '[require_escalated was not approved for this call; the command ran inside the sandbox]\n'
      : '';
  const outcome = args.run_in_background
    ? await startBackgroundJob(context, command)
    : await runForeground(command, args.timeout_ms ?? BASH_DEFAULT_TIMEOUT_MS, context, options);
  return note === '' ? outcome : { ...outcome, output: `${note}${outcome.output}` };
}

type StopReason = 'timeout' | 'cancel' | 'shutdown' | 'limit';

async function runForeground(
  command: string,
  timeoutMs: number,
  context: ToolContext,
  options: BashRunOptions,
): Promise<ToolOutcome> {
  const { signal } = context;
  const jobs = context.jobs ?? processJobManager();
  if (signal.aborted) throw cancellationError(signal);
  jobs.assertAcceptingWork();
  const workspaceError = await checkWorkspace(context.workspace);
  if (workspaceError) return { ok: false, output: workspaceError, changedWorkspace: false };
  const launch = await prepareLaunch({
    command,
    workspace: context.workspace,
    sessionId: context.sessionId,
    settings: context.sandbox ?? DEFAULT_SANDBOX,
    escalated: context.escalated ?? false,
    host: jobs.host,
    limited: true,
  });
  if (!launch.ok) return { ok: false, output: launch.error, changedWorkspace: false };
  try {
    return await runLaunched(launch.spec, timeoutMs, context, options);
  } finally {
    await launch.spec.limits?.cleanup();
  }
}

async function runLaunched(
  spec: LaunchSpec,
  timeoutMs: number,
  context: ToolContext,
  options: BashRunOptions,
): Promise<ToolOutcome> {
  const { signal } = context;
  const jobs = context.jobs ?? processJobManager();
  if (signal.aborted) throw cancellationError(signal);
  jobs.assertAcceptingWork();

  const graceMs = options.killGraceMs ?? BASH_KILL_GRACE_MS;
  const output = new HeadTailBuffer(options.outputCapBytes ?? BASH_OUTPUT_CAP_BYTES);
  const startedAt = Date.now();
  let requestStop: (reason: StopReason) => void = () => {};
  const stopRequested = new Promise<StopReason>((resolve) => {
    requestStop = resolve;
  });
  // Tracked before it starts: a shutdown that begins while the process is being started stops it too.
  const untrack = jobs.trackForeground(context.sessionId, () => requestStop('shutdown'));
  const started = await ToolProcess.start(spec, (chunk) => output.push(chunk));
  if (!started.ok) {
    untrack();
    return { ok: false, output: started.error, changedWorkspace: false };
  }
  const child = started.process;

  const timer = setTimeout(() => requestStop('timeout'), timeoutMs);
  const onAbort = () => requestStop('cancel');
  signal.addEventListener('abort', onAbort, { once: true });
  // The signal may have fired while the sandbox was prepared, before the listener existed.
  if (signal.aborted) onAbort();
  let limitHit: LimitHit | undefined;
  const heartbeat = setInterval(() => {
    // A call over its memory or process limit is stopped whole: a fork bomb would otherwise spin until its timeout.
    limitHit ??= spec.limits?.overLimit();
    if (limitHit) requestStop('limit');
    try {
      context.heartbeat({ elapsedMs: Date.now() - startedAt, outputBytes: output.totalBytes });
    } catch {
      // A failed heartbeat must not kill the command; Temporal notices missing heartbeats by itself.
    }
  }, BASH_HEARTBEAT_INTERVAL_MS);

  let stopReason: StopReason | undefined;
  let exit: ProcessExit | undefined;
  let groupGone = true;
  let leftoversKilled = false;
  try {
    const first = await Promise.race([child.exited, stopRequested]);
    if (typeof first === 'string') {
      stopReason = first;
      groupGone = await child.kill(graceMs);
      exit = await Promise.race([child.exited, delay(PIPE_CLOSE_WAIT_MS, undefined, UNREF)]);
    } else {
      exit = first;
      // The command is done; background processes it left behind would outlive the tool call unobserved.
      if (child.hasLeftovers()) {
        leftoversKilled = true;
        groupGone = await child.kill(graceMs);
      }
    }
    await Promise.race([child.closed, delay(PIPE_CLOSE_WAIT_MS, undefined, UNREF)]);
  } finally {
    clearTimeout(timer);
    clearInterval(heartbeat);
    signal.removeEventListener('abort', onAbort);
    child.detach();
    untrack();
  }

  if (stopReason === 'cancel') throw cancellationError(signal);
  // Killed because the worker stops: another worker runs the call again (and says it may have run).
  if (stopReason === 'shutdown') throw shuttingDownFailure(KILLED_BY_SHUTDOWN_MESSAGE);
  const sandboxFailure = stopReason === undefined ? child.sandboxFailure() : undefined;
  if (sandboxFailure && exit?.code !== 0) {
    return { ok: false, output: `sandbox failed to start: ${sandboxFailure}`, changedWorkspace: false };
  }
  limitHit ??= spec.limits?.overLimit() ?? (killedByCpuLimit(exit) ? 'cpu' : undefined);
  const status = statusLines(stopReason, timeoutMs, exit, groupGone, leftoversKilled);
  const limits = context.sandbox?.limits ?? DEFAULT_RESOURCE_LIMITS;
  return {
    ok: stopReason === undefined && limitHit === undefined && exit?.code === 0,
    output: formatOutput(output.text(), limitHit ? [...status, limitMessage(limitHit, limits)] : status),
    changedWorkspace: true,
  };
}

async function checkWorkspace(workspace: string): Promise<string | undefined> {
  try {
    if (!(await stat(workspace)).isDirectory()) return `workspace is not a directory: ${workspace}`;
  } catch {
    return `workspace directory does not exist: ${workspace}`;
  }
  return undefined;
}

/** True when the command died of SIGXCPU, the signal of the CPU-time rlimit (bwrap reports 128+N). */
function killedByCpuLimit(exit: ProcessExit | undefined): boolean {
  const xcpu = osConstants.signals[CPU_LIMIT_SIGNAL];
  return exit?.signal === CPU_LIMIT_SIGNAL || exit?.code === SIGNAL_EXIT_BASE + xcpu;
}

function statusLines(
  stopReason: StopReason | undefined,
  timeoutMs: number,
  exit: ProcessExit | undefined,
  groupGone: boolean,
  leftoversKilled: boolean,
): string[] {
  const survivors = groupGone ? '' : '; some processes of the group could not be killed';
  if (stopReason === 'timeout')
    return [`[timed out after ${timeoutMs} ms; process group killed${survivors}]`];
  if (stopReason === 'limit') return [`[process group killed${survivors}]`];
  const lines: string[] = [];
  if (leftoversKilled) {
    lines.push(`[background processes the command left running were killed${survivors}]`);
  }
  if (exit?.code !== null && exit?.code !== undefined)
    lines.push(`[exit code ${exit.code}${signalHint(exit.code)}]`);
  else lines.push(`[killed by signal ${exit?.signal ?? 'unknown'}]`);
  return lines;
}

/**
 * Shells (and bwrap, which reports its command's status) turn death by signal N into exit code
 * 128+N; naming the signal saves the model the arithmetic.
 */
function signalHint(code: number): string {
  const name = Object.entries(osConstants.signals).find(
    ([, number]) => number === code - SIGNAL_EXIT_BASE,
  )?.[0];
  return name ? `, i.e. killed by ${name}` : '';
}

function formatOutput(text: string, status: string[]): string {
  const body = text === '' || text.endsWith('\n') ? text : `${text}\n`;
  return `${body}${status.join('\n')}`;
}

/** The `bash` tool. */
export const bashTool: ToolDefinition<BashArgs> = {
  name: TOOL.bash,
  description: [
    'Runs a shell command with `bash -c` in the workspace directory and returns its combined stdout and stderr,',
    'followed by a line with the exit code. Commands run in a sandbox: the workspace is writable, the rest of the',
    'file system is read-only, /tmp is private to this goal, the home directory is hidden ($HOME is a private',
    'directory under /tmp), and the network is off unless the goal allows it. stdin is closed, so interactive',
    'commands fail; pass flags such as --yes. Commands time out after timeout_ms',
    `(default ${BASH_DEFAULT_TIMEOUT_MS} ms, at most ${BASH_MAX_TIMEOUT_MS} ms); on timeout the command and every`,
    'process it started are killed. Background processes (`cmd &`) are killed when the command finishes: for a',
    'server or a watch build use run_in_background, which returns a job id at once; read its output with job_id',
    'and offset (or job-output), stop it with job-kill. API keys and tokens are not in the environment.',
    'Prefer file-read, file-edit, glob and grep for files.',
  ].join(' '),
  schema: bashArgs,
  summarize: summarizeBash,
  run: (args, context) => runBash(args, context),
};
