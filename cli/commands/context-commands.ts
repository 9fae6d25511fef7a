/** `compact`, `policy` and `stats`: the context window and what the goal has spent. */
import { randomUUID } from 'node:crypto';
import { resolveCard } from '../../activities/models/catalog';
import { computeBudget, type PolicyView, policyView, renderPolicy } from '../../core/budget';
import type { CompactionState } from '../../core/compaction/state';
import { renderSummarizerShare, summarizerInputShare } from '../../core/compaction/summarizer-share';
import { renderStats, type UsageBreakdown } from '../../core/cost';
import { ConfigError } from '../../core/errors';
import type { GoalState } from '../../core/goal';
import {
  compactUpdate,
  policyQuery,
  sessionIdOf,
  setAutoCompactUpdate,
  workflowIdOf,
} from '../../workflows/definitions';
import type { CliContext } from '../context';
import { loadStatus, workflowStatus } from '../goal-status';
import { printJson, say } from '../output';

type SavedState = Omit<GoalState, 'ledger'>;

/** The goal state saved on the session row, or a clear error. */
async function savedState(context: CliContext, id: string): Promise<SavedState> {
  const store = await context.sessionStore();
  const row = await store.findSession(id.trim());
  const saved = row?.goalState as SavedState | null | undefined;
  if (!row || !saved) throw new ConfigError(`no goal with session or workflow id "${id}"`);
  return saved;
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
  const resolved = resolveCard(model);
  const budget = computeBudget({ card: resolved.card });
  return { model, windowTokens: budget.windowTokens, warning: resolved.warning };
}

/** `goalrun compact <id> [topic]`: compacts a running goal's context now. */
export async function compactCommand(
  context: CliContext,
  id: string,
  topic: string[],
  options: { json?: boolean },
): Promise<number> {
  const sessionId = sessionIdOf(id.trim());
  const client = await context.temporal();
  if ((await workflowStatus(client, sessionId)) !== 'RUNNING') {
    throw new ConfigError(`goal ${sessionId} is not running; only a running goal can be compacted`);
  }
  const handle = client.workflow.getHandle(workflowIdOf(sessionId));
  say(`compacting ${sessionId} (waits for the current step to finish)…`);
  const result = await handle.executeUpdate(compactUpdate, {
    args: [topic.join(' ')],
    updateId: randomUUID(),
  });
  if (options.json) printJson(result);
  else say(result.note ?? `nothing to compact (${result.beforeTokens} tokens in context)`);
  return 0;
}

/** `goalrun policy <id>`: window, threshold, used, status, auto-compact, failures. */
export async function policyCommand(
  context: CliContext,
  id: string,
  options: { json?: boolean; autoCompact?: string },
): Promise<number> {
  const sessionId = sessionIdOf(id.trim());
  let view: PolicyView | null = null;
  const client = await context.temporalIfRunning();
  const running = client !== null && (await workflowStatus(client, sessionId)) === 'RUNNING';
  if (options.autoCompact !== undefined) {
    if (!running || !client) {
      throw new ConfigError(
        `goal ${sessionId} is not running; auto-compact can only be set on a running goal`,
      );
    }
    view = await client.workflow
      .getHandle(workflowIdOf(sessionId))
      .executeUpdate(setAutoCompactUpdate, { args: [options.autoCompact === 'on'], updateId: randomUUID() });
  } else if (running && client) {
    view = await client.workflow.getHandle(workflowIdOf(sessionId)).query(policyQuery);
  } else {
    view = policyFromCheckpoint((await savedState(context, id)).compaction);
  }
  if (!view) throw new ConfigError(`goal ${sessionId} has no context budget yet (it has not run a step)`);
  const backupModel = (await savedState(context, id).catch(() => null))?.goal.backupModel;
  const backup = backupModel ? backupCard(backupModel) : undefined;
  if (options.json) {
    printJson({ ...view, ...(backup ? { backup } : {}) });
  } else {
    say(renderPolicy(view));
    if (backup) {
      say(
        `backup card:     ${backup.model} (${backup.windowTokens} tokens; configured, not used for automatic failover)`,
      );
      if (backup.warning) say(`                 ${backup.warning}`);
    }
  }
  return 0;
}

/** `goalrun stats <id>`: tokens and cost, per model, summarizer calls shown separately. */
export async function statsCommand(
  context: CliContext,
  id: string,
  options: { json?: boolean },
): Promise<number> {
  const status = await loadStatus(context, id);
  const saved = await savedState(context, id).catch(() => null);
  const breakdown: UsageBreakdown = saved?.breakdown ?? {};
  const compaction = saved?.compaction;
  const share = summarizerInputShare(breakdown, status.usage);
  if (options.json) {
    printJson({
      sessionId: status.sessionId,
      usage: status.usage,
      breakdown,
      compactions: compaction?.compactions ?? 0,
      summarizer: {
        requests: compaction?.summarizerRequests ?? 0,
        tokens: compaction?.summarizerTokens ?? 0,
        inputTokens: share.summarizerInputTokens,
        inputShare: share.share,
      },
    });
    return 0;
  }
  say(renderStats(breakdown, status.usage));
  say(`compactions: ${compaction?.compactions ?? 0}`);
  say(renderSummarizerShare(share));
  return 0;
}
