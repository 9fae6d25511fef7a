/** `compact`, `policy` and `stats`: the context window and what the goal has spent. */

import { randomUUID } from 'node:crypto';
import { agentLines } from '../../core/agents';
import { computeBudget, type PolicyView, policyView, renderPolicy } from '../../core/budget';
import type { CompactionState } from '../../core/compaction/state';
import { renderSummarizerShare, summarizerInputShare } from '../../core/compaction/summarizer-share';
import { renderStats, type UsageBreakdown } from '../../core/cost';
import { ConfigError } from '../../core/errors';
import { failoverView, renderFailoverStats, stepsPerModel } from '../../core/failover-stats';
import type { GoalState } from '../../core/goal';
import { cacheReport, renderCacheReport } from '../../core/prompt-cache';
import { POLICY_QUERY, workflowIdOf } from '../../core/workflow-names';
import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { resolveSessionId } from '../goal-id';
import { loadStatus, queryWithTimeout, waitingForWorker, workflowStatus } from '../goal-status';
import { notice, printJson, say } from '../output';
import { hasLiveWorker, noWorkerMessage } from '../worker-presence';

type SavedState = Omit<GoalState, 'ledger'>;

/** Stages of a `compact` that did not shrink the context as asked: the command exits 1. */
const COMPACTION_DID_NOT_HAPPEN = new Set(['failed', 'discarded']);

// The updates (compact, auto-compact) need the SDK's definitions and the card catalog (zod) only a
// backup card needs: loaded when used, so `policy` and `stats` stay light (issue 10).
const definitions = (): typeof import('../../workflows/definitions') =>
  require('../../workflows/definitions');
const updates = (): typeof import('../update-across-runs') => require('../update-across-runs');
const catalog = (): typeof import('../../activities/models/catalog') =>
  require('../../activities/models/catalog');

/** The goal state saved on the session row, or a clear error. */
async function savedState(context: CliContext, sessionId: string): Promise<SavedState> {
  const store = await context.sessionStore();
  const row = await store.findSession(sessionId);
  const saved = row?.goalState as SavedState | null | undefined;
  if (!row) throw new ConfigError(`no goal with session or workflow id "${sessionId}"`);
  if (!saved)
    throw new ConfigError(`goal ${sessionId} has not saved a checkpoint yet (it has not run a step)`);
  return saved;
}

/**
 * For a goal no worker has picked up: says so (and whether anyone polls its queue) and returns true,
 * so the command reports that instead of an error. `what` names what the goal does not have yet.
 */
export async function reportWaiting(
  context: CliContext,
  sessionId: string,
  what: string,
  json: unknown,
  asJson: boolean | undefined,
): Promise<boolean> {
  const reader = await context.temporalReader();
  const waiting = reader ? await waitingForWorker(reader, sessionId) : null;
  if (!reader || !waiting) return false;
  if (asJson) printJson(json);
  else say(`goal ${sessionId} is waiting for a worker: nothing has run yet, so it has no ${what} yet`);
  if (waiting.taskQueue && (await hasLiveWorker(reader, waiting.taskQueue)) === false) {
    notice(noWorkerMessage(waiting.taskQueue, context.workerHint()));
  }
  return true;
}

/** The policy view of a stopped goal, from its last checkpoint. */
function policyFromCheckpoint(compaction: CompactionState | undefined): PolicyView | null {
  if (!compaction?.budget) return null;
  const { autoCompact } = compaction;
  return policyView({
    budget: compaction.budget,
    usedTokens: compaction.lastInputTokens,
    autoCompact: {
      enabled: autoCompact.enabled,
      failures: autoCompact.consecutiveFailures,
      maxFailures: autoCompact.maxFailures,
      paused: autoCompact.paused,
    },
  });
}

/** The backup card of a goal (spec F-CARDS): configured metadata, resolved like the primary. */
function backupCard(model: string): { model: string; windowTokens: number; warning?: string } {
  const resolved = catalog().resolveCard(model);
  const budget = computeBudget({ card: resolved.card });
  return { model, windowTokens: budget.windowTokens, warning: resolved.warning };
}

/** `goalrun compact <id> [topic]`: compacts a running goal's context now. */
export async function compactCommand(
  context: CliContext,
  id: string | undefined,
  topic: string[],
  options: { json?: boolean; last?: boolean },
): Promise<number> {
  const sessionId = await resolveSessionId(context, { id, last: options.last });
  const client = await context.temporal();
  if ((await workflowStatus(client, sessionId)) !== 'RUNNING') {
    throw new ConfigError(`goal ${sessionId} is not running; only a running goal can be compacted`);
  }
  if (await waitingForWorker(client, sessionId)) {
    throw new ConfigError(`goal ${sessionId} is waiting for a worker; it has no context to compact yet`);
  }
  const handle = client.workflow.getHandle(workflowIdOf(sessionId));
  // With --json, stdout holds only the result.
  (options.json ? notice : say)(`compacting ${sessionId} (waits for the current step to finish)…`);
  const result = await updates().updateAcrossRuns(
    sessionId,
    () =>
      // A handle without a run id: each attempt reaches the run that is current then.
      handle.executeUpdate(definitions().compactUpdate, { args: [topic.join(' ')], updateId: randomUUID() }),
    async () => (await workflowStatus(client, sessionId)) === 'RUNNING',
  );
  if (options.json) printJson(result);
  else say(result.note ?? `nothing to compact (${result.beforeTokens} tokens in context)`);
  // A compaction that failed or whose summary was not used did not do what was asked (issue 16).
  return COMPACTION_DID_NOT_HAPPEN.has(result.stage) ? ExitCode.failedOrBlocked : ExitCode.completed;
}

/** `goalrun policy <id>`: window, threshold, used, status, auto-compact, failures. */
export async function policyCommand(
  context: CliContext,
  id: string | undefined,
  options: { json?: boolean; autoCompact?: string; last?: boolean },
): Promise<number> {
  context.prepareTemporalReader();
  const sessionId = await resolveSessionId(context, { id, last: options.last });
  const waitingJson = { sessionId, status: 'waiting_for_worker', policy: null };
  if (await reportWaiting(context, sessionId, 'context budget', waitingJson, options.json)) {
    if (options.autoCompact !== undefined) {
      throw new ConfigError(`goal ${sessionId} is waiting for a worker; set auto-compact once it runs`);
    }
    return 0;
  }
  let view: PolicyView | null = null;
  const reader = await context.temporalReader();
  const running = reader !== null && (await workflowStatus(reader, sessionId)) === 'RUNNING';
  if (options.autoCompact !== undefined) {
    // An update needs the gRPC client, whichever transport read the status.
    const client = running ? await context.temporalIfRunning() : null;
    if (!client) {
      throw new ConfigError(
        `goal ${sessionId} is not running; auto-compact can only be set on a running goal`,
      );
    }
    view = await client.workflow
      .getHandle(workflowIdOf(sessionId))
      .executeUpdate(definitions().setAutoCompactUpdate, {
        args: [options.autoCompact === 'on'],
        updateId: randomUUID(),
      });
  } else {
    const live =
      running && reader
        ? await queryWithTimeout(() => reader.query(workflowIdOf(sessionId), POLICY_QUERY))
        : null;
    if (running && !live)
      notice(`goal ${sessionId} did not answer (is a worker running it?); showing its last checkpoint`);
    view = live ?? policyFromCheckpoint((await savedState(context, sessionId)).compaction);
  }
  if (!view) throw new ConfigError(`goal ${sessionId} has no context budget yet (it has not run a step)`);
  const backupModel = (await savedState(context, sessionId).catch(() => null))?.goal.backupModel;
  const backup = backupModel ? backupCard(backupModel) : undefined;
  if (options.json) {
    printJson({ ...view, ...(backup ? { backup } : {}) });
  } else {
    say(renderPolicy(view));
    if (backup) {
      say(
        `backup card:     ${backup.model} (${backup.windowTokens} tokens; the next steps fail over to it when the primary is down)`,
      );
      if (backup.warning) say(`                 ${backup.warning}`);
    }
  }
  return 0;
}

/** `goalrun stats <id>`: tokens and cost, per model, summarizer calls shown separately. */
export async function statsCommand(
  context: CliContext,
  id: string | undefined,
  options: { json?: boolean; last?: boolean },
): Promise<number> {
  context.prepareTemporalReader();
  const sessionId = await resolveSessionId(context, { id, last: options.last });
  const waitingJson = { sessionId, status: 'waiting_for_worker', usage: null, breakdown: {} };
  if (await reportWaiting(context, sessionId, 'usage', waitingJson, options.json)) return 0;
  const status = await loadStatus(context, sessionId);
  const saved = await savedState(context, sessionId).catch(() => null);
  const breakdown: UsageBreakdown = saved?.breakdown ?? {};
  const compaction = saved?.compaction;
  // The totals come from the same checkpoint as the per-model rows, so the two always add up (a
  // live total next to a checkpoint's rows counted a request twice over, issue 16).
  const usage = saved?.breakdown && saved.usage ? saved.usage : status.usage;
  const share = summarizerInputShare(breakdown, usage);
  const cache = cacheReport(usage, compaction?.card, compaction?.fixedTokens);
  const steps = stepsPerModel(breakdown);
  const failover = failoverView(saved?.failover, saved?.goal.model ?? status.model);
  if (options.json) {
    printJson({
      sessionId: status.sessionId,
      usage,
      cache,
      breakdown,
      steps,
      failover,
      compactions: compaction?.compactions ?? 0,
      // What each sub-agent cost (issue 27 §2); the breakdown above is this goal's own calls.
      agents: (saved?.agents ?? []).map(({ agentId, sessionId, status, costUsd, tokens, steps }) => ({
        agentId,
        sessionId,
        status,
        costUsd,
        tokens,
        steps,
      })),
      summarizer: {
        requests: compaction?.summarizerRequests ?? 0,
        tokens: compaction?.summarizerTokens ?? 0,
        inputTokens: share.summarizerInputTokens,
        inputShare: share.share,
      },
    });
    return 0;
  }
  say(renderStats(breakdown, usage));
  for (const line of renderFailoverStats(steps, failover)) say(line);
  for (const line of renderCacheReport(cache)) say(line);
  say(
    `compactions: ${compaction?.compactions ?? 0} (summarizer requests: ${compaction?.summarizerRequests ?? 0})`,
  );
  say(renderSummarizerShare(share));
  if (saved?.agents?.length) {
    say("sub-agents (their cost is included in the goal's):");
    for (const line of agentLines(saved.agents)) say(`  ${line}`);
  }
  return 0;
}
