/**
 * The tool activity: runs one workspace tool call under the goal's sandbox settings, redacts known
 * secrets, spools and truncates the output, and stores spool row, event and result message in one
 * transaction under the tool-call id. Also the job activities the workflow calls on the tool host.
 */

import { createHash } from 'node:crypto';
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { argsDigest } from '../core/compaction/stub';
import { charCount } from '../core/compaction/text-excerpt';
import { FailureType } from '../core/errors';
import type { WorkspaceContextSummary } from '../core/extensions/workspace-context';
import { ledgerEntryFor } from '../core/ledger-entry';
import { SPOOL_MIN_TOKENS } from '../core/limits';
import { toolCallsOf } from '../core/messages';
import { DEFAULT_SANDBOX } from '../core/sandbox-settings';
import { executionOfKey, storeKeys } from '../core/store-keys';
import { clipBytes } from '../core/stream-events';
import { estimateTokens } from '../core/tokens';
import { toolRuleRefusal } from '../core/tool-rules';
import { edgeLines } from '../core/truncate';
import { isWaitingCall } from '../core/waiting-call';
import type { SessionStore } from '../store/types';
import {
  createExtensionActivities,
  type GatherWorkspaceContextInput,
  latestContext,
} from './extensions/extension-activities';
import { type McpHub, processMcpHub } from './extensions/mcp-hub';
import { nestedInstructionsKey, runWithExtensions } from './extensions/tool-call-extensions';
import { keepAlive } from './keep-alive';
import { defaultSandboxHost } from './sandbox/host';
import { createRedactor, type Redactor, secretsFromEnvironment } from './sandbox/redact';
import { type OutageContext, untilStored } from './store-outage';
import { resultMessage, type StartedJobRef, storedResult, type ToolRunResult } from './stored-tool-result';
import { findTool } from './tool-catalog';
import { type JobInfo, type JobManager, processJobManager } from './tools/jobs';
import { toolHostRootRefusal } from './tools/tool-host-root';
import type { ToolContext, ToolOutcome } from './tools/types';
import { recordTraceContent } from './trace-content';
import type { RunToolInput } from './types';
import { createVerifyActivities } from './verify-checks';
import { createWorkspaceGitActivities } from './workspace-git-activities';

/** The tool activity's input. */
export type ToolRunInput = RunToolInput;

/** What the tool activity needs from its worker. */
export interface ToolActivityDeps {
  store: SessionStore;
  /** Known secret values (provider keys, the database password); those found in the worker's environment are added. */
  secrets?: string[];
  /** This worker's tool task queue, recorded with the jobs it starts. */
  processQueue?: string;
  /** The worker's processes; absent: the process-wide JobManager. */
  jobs?: JobManager;
  /**
   * A tools worker's workspace root (a real path): calls of goals whose workspace is not inside it
   * are refused. Absent: any workspace (a worker with role all runs the goals of its own store).
   */
  workspaceRoot?: string;
  /** The MCP servers of this process; absent: the process-wide hub (processMcpHub()). */
  mcpHub?: McpHub;
  /** The tool host's environment (the source of MCP `${VAR}` values); absent: process.env. */
  env?: NodeJS.ProcessEnv;
}

/** The first line of a result whose earlier attempt died before its result was saved. */
export function retryNotice(attempt: number): string {
  return `[attempt ${attempt}: an earlier attempt of this call was interrupted before its result was saved; the command may already have run]`;
}

/** Lines of a text as an editor counts them: a trailing newline does not start another line. */
function lineCount(text: string): number {
  if (text === '') return 0;
  let newlines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) newlines += 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

/** Creates the tool activity and the job activities of a tool host. */
export function createToolActivity(deps: ToolActivityDeps) {
  const { store } = deps;
  const jobs = () => deps.jobs ?? processJobManager();
  let redactor: Redactor | undefined;
  // Built on first use, so a worker's environment is read when it runs, not when it is imported.
  const redact = (text: string) => {
    redactor ??= createRedactor([...(deps.secrets ?? []), ...secretsFromEnvironment(process.env)]);
    return redactor(text);
  };
  const processQueue = () => deps.processQueue ?? 'local';
  const hub = () => deps.mcpHub ?? processMcpHub();
  const host = () => deps.jobs?.host ?? defaultSandboxHost();
  const env = deps.env ?? process.env;

  /** Runs one workspace tool call and stores its result (spooled and truncated when large). */
  const runToolCall = async (
    input: ToolRunInput,
    beat: (details?: unknown) => void,
  ): Promise<ToolRunResult> => {
    const resultKey = storeKeys.toolResult(input.toolCallId);
    const eventKey = storeKeys.toolEvent(input.toolCallId);
    const assistantKey = input.assistantKey ?? storeKeys.assistant(1, input.stepNumber);
    // The reads at once, the two messages in one statement: a store round trip is on every call's path.
    const [messages, workspaceContext] = await Promise.all([
      store.getMessagesByKeys(input.sessionId, [resultKey, assistantKey]),
      latestContext(
        store,
        input.sessionId,
        input.assistantKey === undefined ? undefined : executionOfKey(input.assistantKey),
      ),
    ]);
    const stored = messages.get(resultKey);
    const assistant = messages.get(assistantKey);
    if (stored) return storedResult(store, input, stored.seq, stored.key, stored.message, processQueue());
    // Checked after the stored result: a finished call still answers during shutdown.
    jobs().assertAcceptingWork();

    const call = assistant
      ? toolCallsOf(assistant.message).find((c) => c.toolCallId === input.toolCallId)
      : undefined;
    if (!call) {
      throw ApplicationFailure.create({
        message: `tool call ${input.toolCallId} of step ${input.stepNumber} is not in the store`,
        type: 'ToolCallMissing',
        nonRetryable: true,
      });
    }
    const context = Context.current();
    const { attempt } = context.info;
    const refusal =
      (deps.workspaceRoot ? await toolHostRootRefusal(input.workspace, deps.workspaceRoot) : null) ??
      // The goal's tool rules, before anything runs: the refusal is the result the model reads.
      toolRuleRefusal(input.toolRules, call.toolName, call.input);
    const toolContext: ToolContext = {
      workspace: input.workspace,
      sessionId: input.sessionId,
      toolCallId: input.toolCallId,
      signal: context.cancellationSignal,
      heartbeat: beat,
      store,
      sandbox: input.sandbox ?? DEFAULT_SANDBOX,
      escalated: input.escalationApproved ?? false,
      jobId: input.jobId,
      jobs: jobs(),
    };
    // Hooks, MCP tools and nested AGENTS.md, for goals whose execution gathered a workspace context.
    const outcome: ToolOutcome & { secrets?: readonly string[]; instructionsShown?: string[] } = refusal
      ? { ok: false, output: refusal, changedWorkspace: false }
      : await runWithExtensions(
          call.toolName,
          call.input,
          workspaceContext,
          toolContext,
          { hub: hub(), host: host(), env },
          () => executeTool(call.toolName, call.input, toolContext),
        );
    // PostgreSQL text and jsonb cannot hold NUL; a binary-ish output would fail every retry.
    let output = redact(outcome.output.replaceAll('\u0000', '\uFFFD'));
    if (outcome.secrets?.length) output = createRedactor(outcome.secrets)(output);
    if (attempt > 1) output = `${retryNotice(attempt)}\n${output}`;
    // On the call's `execute_tool` span, with --trace-content only; the output is the redacted one.
    recordTraceContent(() => ({
      'gen_ai.tool.call.arguments': JSON.stringify(call.input ?? null),
      'gen_ai.tool.call.result': output,
    }));
    const bytes = Buffer.byteLength(output, 'utf8');
    const spooled = estimateTokens(output) > SPOOL_MIN_TOKENS;
    const edges = edgeLines(output);
    const job: StartedJobRef | undefined = outcome.job
      ? { ...outcome.job, command: redact(outcome.job.command), processQueue: processQueue() }
      : undefined;
    // What the runaway breaker compares (the same call with the same result); kept with the result's
    // event so that a retry that finds the result stored answers the same.
    const digests = {
      callDigest: shortHash(`${call.toolName}\n${JSON.stringify(call.input ?? null)}`),
      outputDigest: shortHash(`${outcome.ok}\n${output}`),
      ...(isWaitingCall(call.toolName, call.input) ? { waited: true as const } : {}),
    };
    // The command ran: its result must land in this attempt, or a retry would run it again.
    const outage: OutageContext = {
      signal: context.cancellationSignal,
      heartbeat: beat,
      deadlineMs: context.info.currentAttemptScheduledTimestampMs + context.info.startToCloseTimeoutMs,
    };
    const recorded = await untilStored('recording the tool result', outage, () =>
      store.recordToolResult({
        sessionId: input.sessionId,
        toolCallId: input.toolCallId,
        toolName: call.toolName,
        messageKey: resultKey,
        eventKey,
        spoolContent: spooled ? output : undefined,
        message: (spoolId) => resultMessage(input.toolCallId, call.toolName, outcome.ok, output, spoolId),
        facts: {
          ok: outcome.ok,
          changedWorkspace: outcome.changedWorkspace,
          bytes,
          chars: charCount(output),
          lines: lineCount(output),
          firstLine: edges.first,
          lastLine: edges.last,
          argsDigest: redact(argsDigest(call.input)),
        },
        eventExtra: {
          attempt,
          ...digests,
          // The start of the output, for the event stream's tool_result (the whole is in the message).
          head: clipBytes(output).text,
          ...(job ? { job } : {}),
          ...(outcome.killedJobs ? { killedJobs: outcome.killedJobs } : {}),
          ...(input.escalationApproved ? { escalated: true } : {}),
        },
      }),
    );
    if (!recorded.created) {
      return storedResult(store, input, recorded.seq, resultKey, recorded.message, processQueue());
    }
    // Marked once the result that shows them is stored: a call cut short shows them again next time.
    for (const label of outcome.instructionsShown ?? []) {
      await untilStored('marking instructions shown', outage, () =>
        store.appendEvent(
          input.sessionId,
          'instructions',
          { label, toolCallId: input.toolCallId },
          nestedInstructionsKey(label),
        ),
      );
    }
    const { facts } = recorded;
    log.info(`${call.toolName} of ${input.sessionId} ${facts.ok ? 'ok' : 'failed'}`, {
      step: input.stepNumber,
      bytes,
      spoolId: facts.spoolId,
      lastLine: facts.lastLine,
    });
    return {
      entry: ledgerEntryFor(recorded.seq, resultKey, recorded.message, {
        spoolId: facts.spoolId,
        bytes,
        ok: facts.ok,
      }),
      ok: facts.ok,
      changedWorkspace: facts.changedWorkspace,
      firstLine: facts.firstLine,
      lastLine: facts.lastLine,
      ...digests,
      facts,
      ...(job ? { job } : {}),
      ...(outcome.killedJobs ? { killedJobs: outcome.killedJobs } : {}),
    };
  };

  const extensions = createExtensionActivities({
    store,
    get hub() {
      return hub();
    },
    host,
    env,
    workspaceRoot: deps.workspaceRoot,
    secrets: deps.secrets,
  });
  // Told with each gathering and tool call: a goal that left nothing here needs no close at its end.
  const leftOnHost = (sessionId: string) => jobs().holds(sessionId) || hub().holds(sessionId);

  return {
    ...extensions,

    async gatherWorkspaceContext(input: GatherWorkspaceContextInput): Promise<WorkspaceContextSummary> {
      const summary = await extensions.gatherWorkspaceContext(input);
      return { ...summary, leftOnHost: leftOnHost(input.sessionId) };
    },
    ...createVerifyActivities({ store, host, redact, workspaceRoot: deps.workspaceRoot }),

    ...createWorkspaceGitActivities({ host, workspaceRoot: deps.workspaceRoot }),

    /**
     * Runs one workspace tool call and stores its result (spooled and truncated when large), beating
     * every KEEP_ALIVE_MS besides the tool's own beats (a foreground host's heartbeat timeout is short).
     */
    async runTool(input: ToolRunInput): Promise<ToolRunResult> {
      const alive = keepAlive(Context.current());
      try {
        const result = await runToolCall(input, alive.beat);
        return { ...result, leftOnHost: leftOnHost(input.sessionId) };
      } finally {
        alive.stop();
      }
    },

    /** Kills every job and running command of a session on this host (the goal ended). */
    async killSessionJobs(input: { sessionId: string }): Promise<{ killed: string[] }> {
      // The goal's MCP servers go first: killing the session removes the private /tmp they run in.
      await hub().closeSession(input.sessionId);
      return { killed: await jobs().killSession(input.sessionId) };
    },

    /** The jobs of a session on this host. */
    async listSessionJobs(input: { sessionId: string }): Promise<{ jobs: JobInfo[] }> {
      return {
        jobs: jobs()
          .list(input.sessionId)
          .map((job) => ({ ...job, command: redact(job.command) })),
      };
    },
  };
}

/** Runs a tool by name with validated arguments; every problem becomes a result the model can read. */
async function executeTool(toolName: string, rawInput: unknown, context: ToolContext): Promise<ToolOutcome> {
  const tool = findTool(toolName);
  if (!tool) {
    return { ok: false, output: `unknown tool "${toolName}"`, changedWorkspace: false };
  }
  const parsed = tool.parse(rawInput);
  if (!parsed.ok) return { ok: false, output: parsed.error, changedWorkspace: false };
  try {
    return await tool.run(parsed.args, context);
  } catch (err) {
    if (context.signal.aborted) throw new CancelledFailure(`${toolName} cancelled`);
    // The worker is going away: Temporal retries the call on another worker.
    if (err instanceof ApplicationFailure && err.type === FailureType.ToolHostShuttingDown) throw err;
    return { ok: false, output: `${toolName} failed: ${(err as Error).message}`, changedWorkspace: false };
  }
}

/** A short hash (the breaker compares equality; 16 hex digits make a collision negligible). */
function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
