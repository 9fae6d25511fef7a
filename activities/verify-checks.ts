/**
 * The goal's checks (issue 27 §1), run on the tool host when the model calls `finish` complete: each
 * is `bash -c COMMAND` in the workspace, in the goal's sandbox (the bash tool's), with a timeout. Its
 * whole output goes to the spool (the model reads it with tool-output), the state gets a tail. Fails
 * closed: a check that timed out, could not start, or whose workspace the host refuses has failed.
 */
import { Context } from '@temporalio/activity';
import { EVENT_KINDS } from '../core/event-kinds';
import { DEFAULT_SANDBOX, type SandboxSettings } from '../core/sandbox-settings';
import { type CheckOutcome, DEFAULT_VERIFY_TIMEOUT_S, outputTail } from '../core/verify';
import type { SessionStore } from '../store/types';
import type { SandboxHost } from './sandbox/host';
import { runCaptured } from './sandbox/run-captured';
import { toolHostRootRefusal } from './tools/tool-host-root';

/** How often a running check heartbeats (well under the tool heartbeat timeout). */
const VERIFY_HEARTBEAT_MS = 5_000;
/** Runs the command with its stderr merged into its stdout, in order, as the bash tool does. */
const MERGED_OUTPUT_SCRIPT = 'exec bash -c "$1" 2>&1';
/** The tool name the spool rows of checks are filed under. */
export const VERIFY_SPOOL_TOOL = 'verify';

/** Input of `runVerifyChecks`. */
export interface VerifyChecksInput {
  sessionId: string;
  workspace: string;
  sandbox?: SandboxSettings;
  /** The finish call whose claim the checks test: it keys the spool rows. */
  toolCallId: string;
  checks: string[];
  timeoutS?: number;
}

/** What the verify activity needs from its worker. */
export interface VerifyActivityDeps {
  store: SessionStore;
  host: () => SandboxHost;
  redact: (text: string) => string;
  workspaceRoot?: string;
}

/** Creates the verify activity of a tool host. */
export function createVerifyActivities(deps: VerifyActivityDeps) {
  return {
    /** Runs every check in order (all of them, so the model sees every failure at once). */
    async runVerifyChecks(input: VerifyChecksInput): Promise<{ checks: CheckOutcome[] }> {
      const refusal = deps.workspaceRoot
        ? await toolHostRootRefusal(input.workspace, deps.workspaceRoot)
        : null;
      const context = Context.current();
      const beat = setInterval(() => context.heartbeat(), VERIFY_HEARTBEAT_MS);
      const timeoutS = input.timeoutS ?? DEFAULT_VERIFY_TIMEOUT_S;
      const checks: CheckOutcome[] = [];
      try {
        for (const [index, command] of input.checks.entries()) {
          if (refusal) {
            checks.push({ command, exitCode: null, ok: false, problem: `not run: ${refusal}`, tail: '' });
            continue;
          }
          const started = Date.now();
          const run = await runCaptured({
            argv: ['bash', '-c', MERGED_OUTPUT_SCRIPT, 'bash', command],
            workspace: input.workspace,
            sessionId: input.sessionId,
            settings: input.sandbox ?? DEFAULT_SANDBOX,
            host: deps.host(),
            timeoutMs: timeoutS * 1000,
            signal: context.cancellationSignal,
          });
          if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
          const output = deps.redact(`${run.stdout}${run.stderr}`.replaceAll('\u0000', '\uFFFD'));
          const problem = run.startError
            ? `could not start: ${run.startError}`
            : run.timedOut
              ? `timed out after ${timeoutS} s`
              : undefined;
          const { spoolId } = await deps.store.writeSpool(
            input.sessionId,
            `verify:${input.toolCallId}:${index}`,
            VERIFY_SPOOL_TOOL,
            output === '' ? '(no output)' : output,
          );
          checks.push({
            command,
            exitCode: run.code,
            // Only an exit code of 0 passes: a kill, a timeout or a failed start never does.
            ok: !problem && run.code === 0,
            ...(problem ? { problem } : {}),
            spool: `spool:${spoolId}`,
            tail: outputTail(output),
            ms: Date.now() - started,
          });
        }
        await deps.store.appendEvent(
          input.sessionId,
          EVENT_KINDS.verify,
          {
            toolCallId: input.toolCallId,
            passed: checks.length > 0 && checks.every((check) => check.ok),
            checks: checks.map(({ tail: _tail, ...facts }) => facts),
          },
          `verify:${input.toolCallId}`,
        );
        return { checks };
      } finally {
        clearInterval(beat);
      }
    },
  };
}
