/**
 * The `bash` tool: runs a shell command in the workspace, in its own process group so that a
 * timeout or a cancellation can kill everything the command started.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import {
  BASH_DEFAULT_TIMEOUT_MS,
  BASH_HEARTBEAT_INTERVAL_MS,
  BASH_KILL_GRACE_MS,
  BASH_MAX_TIMEOUT_MS,
  BASH_OUTPUT_CAP_BYTES,
} from '../../core/limits';
import { HeadTailBuffer } from './head-tail-buffer';
import { isGroupAlive, killProcessGroup } from './process-group';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';

/** How long to wait for the output pipes to close once the group is gone (a process that left the group may hold them). */
const PIPE_CLOSE_WAIT_MS = 500;
/** The fallback waits above must not keep a shutting-down worker alive on their own. */
const UNREF = { ref: false };
/** Longest command text shown by summarize. */
const SUMMARY_MAX_CHARS = 60;

/** Environment variables never passed to commands: provider keys and anything that looks like a credential. */
const SECRET_NAMES = new Set(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'AWS_SECRET_ACCESS_KEY']);
const SECRET_SUFFIXES = ['_API_KEY', '_TOKEN', '_SECRET', 'PASSWORD', '_SECRET_KEY', '_PRIVATE_KEY'];

/**
 * Merges stderr into stdout in the child itself so both arrive through one pipe in the order they
 * were written (two pipes read by Node interleave unpredictably). `exec` keeps the group leader's pid.
 */
const MERGE_STDERR_SCRIPT = 'exec bash -c "$1" 2>&1';

export const bashArgs = z.object({
  command: z.string().min(1).describe('The shell command to run with `bash -c`, in the workspace directory.'),
  timeout_ms: z
    .number()
    .int()
    .positive()
    .max(BASH_MAX_TIMEOUT_MS)
    .optional()
    .describe(
      `Time limit in milliseconds (default ${BASH_DEFAULT_TIMEOUT_MS}, at most ${BASH_MAX_TIMEOUT_MS}).`,
    ),
  description: z
    .string()
    .optional()
    .describe('A few words on what the command is for, e.g. "run the unit tests".'),
});

/** Arguments of the bash tool. */
export type BashArgs = z.infer<typeof bashArgs>;

/** Knobs tests turn down; the tool itself always uses the defaults from core/limits. */
export interface BashRunOptions {
  outputCapBytes?: number;
  killGraceMs?: number;
}

/** True when an environment variable of this name may hold a secret. */
export function isSecretEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  return SECRET_NAMES.has(upper) || SECRET_SUFFIXES.some((suffix) => upper.endsWith(suffix));
}

/** The worker's environment without secrets, for the commands the model runs. */
export function scrubEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const scrubbed: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !isSecretEnvName(name)) scrubbed[name] = value;
  }
  return scrubbed;
}

/** The error a cancelled command rejects with: the signal's own reason (Temporal's CancelledFailure) when it has one. */
function cancellationError(signal: AbortSignal): Error {
  if (signal.reason instanceof Error) return signal.reason;
  const error = new Error('bash command cancelled; process group killed');
  error.name = 'AbortError';
  return error;
}

/** One line for the UI: `bash: <first line of the command>`. */
export function summarizeBash(args: BashArgs): string {
  const firstLine = args.command.trimStart().split('\n', 1)[0].trimEnd();
  const shown =
    firstLine.length > SUMMARY_MAX_CHARS ? `${firstLine.slice(0, SUMMARY_MAX_CHARS - 1)}…` : firstLine;
  return `bash: ${shown}`;
}

/** Runs a command as the bash tool does; `options` exist for tests. */
export async function runBash(
  args: BashArgs,
  context: ToolContext,
  options: BashRunOptions = {},
): Promise<ToolOutcome> {
  const { signal } = context;
  if (signal.aborted) throw cancellationError(signal);
  const workspaceError = await checkWorkspace(context.workspace);
  if (workspaceError) return { ok: false, output: workspaceError, changedWorkspace: false };

  const timeoutMs = args.timeout_ms ?? BASH_DEFAULT_TIMEOUT_MS;
  const graceMs = options.killGraceMs ?? BASH_KILL_GRACE_MS;
  const output = new HeadTailBuffer(options.outputCapBytes ?? BASH_OUTPUT_CAP_BYTES);
  const startedAt = Date.now();

  const child = spawn('bash', ['-c', MERGE_STDERR_SCRIPT, 'bash', args.command], {
    cwd: context.workspace,
    env: scrubEnv(process.env),
    // Own process group (pgid = pid), so the whole tree can be signalled at once.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const pgid = child.pid;
  if (pgid === undefined) {
    const error = await spawnError;
    return { ok: false, output: `failed to start bash: ${error.message}`, changedWorkspace: false };
  }

  const onData = (chunk: Buffer) => output.push(chunk);
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, exitSignal) => resolve({ code, signal: exitSignal })),
  );
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  let stopReason: 'timeout' | 'cancel' | undefined;
  let requestStop: (reason: 'timeout' | 'cancel') => void = () => {};
  const stopRequested = new Promise<'timeout' | 'cancel'>((resolve) => {
    requestStop = resolve;
  });
  const timer = setTimeout(() => requestStop('timeout'), timeoutMs);
  const onAbort = () => requestStop('cancel');
  signal.addEventListener('abort', onAbort, { once: true });
  // The signal may have fired while we checked the workspace, before the listener existed.
  if (signal.aborted) onAbort();
  const heartbeat = setInterval(() => {
    try {
      context.heartbeat({ elapsedMs: Date.now() - startedAt, outputBytes: output.totalBytes });
    } catch {
      // A failed heartbeat must not kill the command; Temporal notices missing heartbeats by itself.
    }
  }, BASH_HEARTBEAT_INTERVAL_MS);

  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let groupGone = true;
  let leftoversKilled = false;
  try {
    const first = await Promise.race([exited, stopRequested]);
    if (first === 'timeout' || first === 'cancel') {
      stopReason = first;
      groupGone = await killProcessGroup(pgid, graceMs);
      exit = await Promise.race([exited, delay(PIPE_CLOSE_WAIT_MS, undefined, UNREF)]);
    } else {
      exit = first;
      // The command is done; background processes it left behind would outlive the tool call unobserved.
      if (isGroupAlive(pgid)) {
        leftoversKilled = true;
        groupGone = await killProcessGroup(pgid, graceMs);
      }
    }
    await Promise.race([closed, delay(PIPE_CLOSE_WAIT_MS, undefined, UNREF)]);
  } finally {
    clearTimeout(timer);
    clearInterval(heartbeat);
    signal.removeEventListener('abort', onAbort);
    child.stdout?.destroy();
    child.stderr?.destroy();
  }

  if (stopReason === 'cancel') throw cancellationError(signal);
  return {
    ok: stopReason === undefined && exit?.code === 0,
    output: formatOutput(output.text(), statusLines(stopReason, timeoutMs, exit, groupGone, leftoversKilled)),
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

function statusLines(
  stopReason: 'timeout' | 'cancel' | undefined,
  timeoutMs: number,
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined,
  groupGone: boolean,
  leftoversKilled: boolean,
): string[] {
  const survivors = groupGone ? '' : '; some processes of the group could not be killed';
  if (stopReason === 'timeout')
    return [`[timed out after ${timeoutMs} ms; process group killed${survivors}]`];
  const lines: string[] = [];
  if (leftoversKilled) {
    lines.push(`[background processes the command left running were killed${survivors}]`);
  }
  if (exit?.code !== null && exit?.code !== undefined) lines.push(`[exit code ${exit.code}]`);
  else lines.push(`[killed by signal ${exit?.signal ?? 'unknown'}]`);
  return lines;
}

function formatOutput(text: string, status: string[]): string {
  const body = text === '' || text.endsWith('\n') ? text : `${text}\n`;
  return `${body}${status.join('\n')}`;
}

/** The `bash` tool. */
export const bashTool: ToolDefinition<BashArgs> = {
  name: 'bash',
  description: [
    'Runs a shell command with `bash -c` in the workspace directory and returns its combined stdout and stderr,',
    'followed by a line with the exit code. stdin is closed, so interactive commands fail; pass flags such as',
    `--yes or use non-interactive modes. Commands time out after timeout_ms (default ${BASH_DEFAULT_TIMEOUT_MS} ms,`,
    `at most ${BASH_MAX_TIMEOUT_MS} ms); on timeout the command and every process it started are killed.`,
    'Background processes (`cmd &`) are killed when the command finishes, so do not start servers this way.',
    'API keys and tokens are not in the environment. Prefer file-read, file-edit, glob and grep for files.',
  ].join(' '),
  schema: bashArgs,
  summarize: summarizeBash,
  run: (args, context) => runBash(args, context),
};
