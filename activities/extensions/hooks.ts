/**
 * Runs a goal's hooks on the tool host, each in the goal's sandbox (`bash -c COMMAND` in the
 * workspace) with its event as JSON on stdin and a timeout. Exit 0 lets things go on; exit 2 is a
 * veto (pre_tool denies the call, stop keeps the goal going) with stderr as the reason; any other
 * exit, a timeout or a hook that cannot start is a hook failure.
 */
import type { SandboxSettings } from '../../core/sandbox-settings';
import { clip, clipHead } from '../../core/text';
import type { SandboxHost } from '../sandbox/host';
import { runCaptured } from '../sandbox/run-captured';
import { DEFAULT_HOOK_TIMEOUT_S, DEFAULT_NOTIFY_TIMEOUT_S, type HookEvent } from './config-schemas';
import type { ConfiguredHook } from './extension-config';

/** The exit code of a veto (Claude Code's convention). */
export const HOOK_VETO_EXIT = 2;
/** Most characters of a hook's stdout or stderr carried into a result, a message or an event. */
export const HOOK_TEXT_MAX_CHARS = 4_000;

/** Where a goal's hooks run. */
export interface HookRunContext {
  workspace: string;
  sessionId: string;
  sandbox: SandboxSettings;
  host: SandboxHost;
  signal?: AbortSignal;
}

/** How one hook ended. */
export interface HookRun {
  index: number;
  command: string;
  source: ConfiguredHook['source'];
  outcome: 'ok' | 'veto' | 'failed';
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** For a failure: what went wrong, one line. */
  problem?: string;
  ms: number;
}

function clipHookText(text: string): string {
  return clip(text.trim(), HOOK_TEXT_MAX_CHARS);
}

/** The hooks of an event that apply to a tool (pre_tool and post_tool match tool names). */
export function matchingHooks(hooks: readonly ConfiguredHook[], toolName?: string): ConfiguredHook[] {
  return hooks.filter(
    (hook) => !hook.matcher || toolName === undefined || new RegExp(hook.matcher).test(toolName),
  );
}

/** Runs one hook with its event on stdin. */
export async function runHook(
  event: HookEvent,
  hook: ConfiguredHook,
  index: number,
  payload: unknown,
  context: HookRunContext,
): Promise<HookRun> {
  const timeoutS = hook.timeout_s ?? (event === 'notify' ? DEFAULT_NOTIFY_TIMEOUT_S : DEFAULT_HOOK_TIMEOUT_S);
  const started = Date.now();
  const run = await runCaptured({
    argv: ['bash', '-c', hook.command],
    workspace: context.workspace,
    sessionId: context.sessionId,
    settings: hook.network ? { ...context.sandbox, network: true } : context.sandbox,
    host: context.host,
    stdin: `${JSON.stringify(payload)}\n`,
    timeoutMs: timeoutS * 1000,
    signal: context.signal,
  });
  const base = {
    index,
    command: hook.command,
    source: hook.source,
    exitCode: run.code,
    stdout: clipHookText(run.stdout),
    stderr: clipHookText(run.stderr),
    ms: Date.now() - started,
  };
  if (run.startError) return { ...base, outcome: 'failed', problem: `could not start: ${run.startError}` };
  if (run.timedOut) return { ...base, outcome: 'failed', problem: `timed out after ${timeoutS} s` };
  if (run.code === 0) return { ...base, outcome: 'ok' };
  if (run.code === HOOK_VETO_EXIT) return { ...base, outcome: 'veto' };
  const said = base.stderr ? `: ${base.stderr.split('\n')[0]}` : '';
  return { ...base, outcome: 'failed', problem: `exit code ${run.code}${said}` };
}

/** What an event's hooks decided: the first veto ends the run of hooks. */
export interface HookVerdict {
  veto: { reason: string; hook: HookRun } | null;
  runs: HookRun[];
  /** One line per failed hook, for notices. */
  failures: string[];
}

/**
 * Runs an event's hooks in order until one vetoes. A failing pre_tool hook with `on_error: "deny"`
 * (the default: a policy that cannot run must not let everything through) counts as a veto.
 */
export async function runHooks(
  event: HookEvent,
  hooks: readonly ConfiguredHook[],
  payload: unknown,
  context: HookRunContext,
): Promise<HookVerdict> {
  const runs: HookRun[] = [];
  const failures: string[] = [];
  for (const [index, hook] of hooks.entries()) {
    const run = await runHook(event, hook, index, payload, context);
    runs.push(run);
    if (run.outcome === 'veto') {
      return {
        veto: { reason: run.stderr || `a ${event} hook said no (exit ${HOOK_VETO_EXIT})`, hook: run },
        runs,
        failures,
      };
    }
    if (run.outcome === 'failed') {
      const line = `${event} hook "${oneLine(hook.command)}" failed: ${run.problem}`;
      failures.push(line);
      if (event === 'pre_tool' && (hook.on_error ?? 'deny') === 'deny') {
        return { veto: { reason: `${line}; its on_error is "deny"`, hook: run }, runs, failures };
      }
    }
  }
  return { veto: null, runs, failures };
}

function oneLine(text: string): string {
  return clip(text.replace(/\s+/g, ' ').trim(), 80);
}

/** The event data recorded for a hook run (never its whole output). */
export function hookRunEvent(event: HookEvent, run: HookRun, extra: Record<string, unknown> = {}) {
  return {
    event,
    command: oneLine(run.command),
    source: run.source,
    outcome: run.outcome,
    exitCode: run.exitCode,
    ms: run.ms,
    ...(run.problem ? { problem: run.problem } : {}),
    ...(run.outcome === 'veto' ? { reason: clipHead(run.stderr, 500) } : {}),
    ...extra,
  };
}
