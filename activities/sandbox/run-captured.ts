/**
 * Runs one short program in a goal's sandbox with text on its stdin, and captures its stdout,
 * stderr and exit code apart: the environment snapshot (`git status`) and hooks. A timeout or a
 * cancellation kills its whole process group (and with it the sandbox).
 */
import type { SandboxSettings } from '../../core/sandbox-settings';
import { killProcessGroup } from '../tools/process-group';
import type { SandboxHost } from './host';
import { prepareLaunch } from './launch';
import { startChild } from './spawn-child';

/** Each of stdout and stderr keeps at most this much. */
const CAPTURE_MAX_BYTES = 256 * 1024;
/** Grace between SIGTERM and SIGKILL when a captured run is stopped. */
const KILL_GRACE_MS = 1_000;

/** How a captured run ended. */
export interface CapturedRun {
  /** The exit code, or null when it was killed (timeout, cancellation) or could not start. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Why it could not start (no sandbox, missing program), if it did not. */
  startError?: string;
}

/** What to run, where and how long. */
export interface CapturedRequest {
  argv: readonly string[];
  workspace: string;
  sessionId: string;
  settings: SandboxSettings;
  host: SandboxHost;
  stdin?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  extraEnv?: Record<string, string>;
}

/** Runs the program to its end (or its timeout) and returns what it said. */
export async function runCaptured(request: CapturedRequest): Promise<CapturedRun> {
  const launch = await prepareLaunch({
    command: '',
    argv: request.argv,
    workspace: request.workspace,
    sessionId: request.sessionId,
    settings: request.settings,
    escalated: false,
    host: request.host,
    extraEnv: request.extraEnv,
    infoFd: false,
    limited: true,
  });
  if (!launch.ok) return { code: null, stdout: '', stderr: '', timedOut: false, startError: launch.error };
  const { spec } = launch;
  // From the tool host's spawn server, in a process group of its own (pgid = pid).
  const started = await startChild({
    file: spec.file,
    args: spec.args,
    env: spec.env,
    cwd: spec.cwd,
    stdin: true,
    infoFd: false,
  });
  if (!started.ok) {
    await spec.limits?.cleanup();
    return { code: null, stdout: '', stderr: '', timedOut: false, startError: started.error };
  }
  const { child, pid } = started;
  const out = capture(child.stdout);
  const err = capture(child.stderr);
  // A program that does not read its stdin must not fail the run with EPIPE.
  child.stdin?.on('error', () => undefined);
  child.stdin?.end(request.stdin ?? '');
  let timedOut = false;
  let stopping: Promise<boolean> | undefined;
  const stop = () => {
    stopping ??= killProcessGroup(pid, KILL_GRACE_MS);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, request.timeoutMs);
  request.signal?.addEventListener('abort', stop, { once: true });
  try {
    const code = await new Promise<number | null>((resolve) =>
      child.once('close', (exit: number | null) => resolve(exit)),
    );
    await stopping;
    return { code: timedOut ? null : code, stdout: out.text(), stderr: err.text(), timedOut };
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener('abort', stop);
    await spec.limits?.cleanup();
  }
}

function capture(stream: NodeJS.ReadableStream | null): { text: () => string } {
  const chunks: Buffer[] = [];
  let size = 0;
  stream?.on('data', (chunk: Buffer) => {
    if (size >= CAPTURE_MAX_BYTES) return;
    chunks.push(chunk.subarray(0, CAPTURE_MAX_BYTES - size));
    size += chunk.length;
  });
  return { text: () => Buffer.concat(chunks).toString('utf8') };
}
