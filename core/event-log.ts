/**
 * The session's event log (store `events` rows) read as the headless event stream. The log is the
 * single ordered record of what happened; each row becomes zero or more stream events, so `watch`
 * can replay a goal from the start or follow it from a cursor after the fact.
 */
import { EVENT_KINDS } from './event-kinds';
import { roundedShare } from './prompt-cache';
import type { BudgetView, CapKind } from './spend-cap';
import { clipBytes, type StreamEvent } from './stream-events';
import type { TaskView } from './task-graph-types';
import type { RequestUsage, UsageTotals } from './usage';

/** One row of the event log, as the store returns it. */
export interface LoggedEvent {
  id: number;
  kind: string;
  data: unknown;
}

/**
 * Kinds shown as a notice, with the text each one says. The stream is read in the CLI (`watch`,
 * `run`), so a notice that asks for something names the goalrun command that does it.
 */
const NOTICE_KINDS: Record<string, (data: Record<string, unknown>, sessionId: string) => string | undefined> =
  {
    paused: (_data, sessionId) => `paused until goalrun unpause ${sessionId}`,
    unpaused: () => 'unpaused',
    'limit-reached': (data, sessionId) =>
      `limit reached: ${String(data.reason ?? '')}; waiting for goalrun limits ${sessionId} --max-steps N (or --max-iterations, --max-minutes)`,
    'limits-raised': () => 'limits raised; going on',
    'kept-progress': (data) => `kept progress:\n${String(data.summary ?? '')}`,
    // A sub-agent started or ended (issue 27 §2).
    agent: (data) =>
      data.at === 'spawned'
        ? `sub-agent ${String(data.agent)} started: session ${String(data.sessionId)}`
        : `sub-agent ${String(data.agent)} ${String(data.status)}: $${Number(data.costUsd ?? 0).toFixed(4)}, ${String(data.steps ?? 0)} steps`,
    command: (data) => `command from ${String(data.from ?? 'someone')}: ${String(data.text ?? '')}`,
    // A hook that said no or failed is worth a line; one that let things go on is not.
    hook: (data) =>
      data.outcome === 'veto'
        ? `${String(data.event)} hook said no${data.tool ? ` to ${String(data.tool)}` : ''}: ${String(data.reason ?? '')}`
        : data.outcome === 'failed'
          ? `${String(data.event)} hook failed: ${String(data.problem ?? '')}`
          : undefined,
    // The goal's checks at a finish (issue 27 §1): one line per check, with its output's spool reference.
    verify: (data) => {
      const checks = Array.isArray(data.checks) ? (data.checks as GoalEndedCheck[]) : [];
      const lines = checks.map(
        (check) =>
          `${check.ok ? 'passed' : 'FAILED'}: ${check.command} (${check.problem ?? `exit ${check.exitCode}`})${check.spool ? ` ${check.spool}` : ''}`,
      );
      return `checks ${data.passed ? 'passed' : 'failed'} at finish:\n${lines.join('\n')}`;
    },
  };

/** What the init event carries (written with session-opened and session-resumed). */
export interface InitData {
  workflowId: string;
  model: string;
  workspace: string;
  objective: string;
  limits: { maxSteps: number; maxIterations: number; maxMinutes: number };
}

/** A tool call as the model-usage event records it. */
export interface LoggedToolCall {
  id: string;
  name: string;
  summary: string;
  arguments: string;
}

/** What goal-ended carries: the facts of `status --json`. */
export interface GoalEndedData {
  status: string;
  reason: string | null;
  summary?: string | null;
  steps?: number;
  iterations?: number;
  elapsedMs?: number;
  costUsd?: number;
  usage?: UsageTotals;
  /** Whether the goal ended completed with every check passed (absent in rows of older builds). */
  verified?: boolean;
  /** The checks of the last finish that ran them. */
  checks?: GoalEndedCheck[];
}

/** A check as the goal-ended event keeps it: its exit code and the spool reference of its output. */
export interface GoalEndedCheck {
  command: string;
  exitCode: number | null;
  ok: boolean;
  problem?: string;
  spool?: string;
}

/** What a `budget` row carries: the budget view, where the goal is, and which cap stopped it. */
export interface BudgetEventData extends BudgetView {
  at: 'cap' | 'raised';
  cap: CapKind | null;
  reason: string | null;
}

/** The stream events of one logged event (none for bookkeeping rows such as progress). */
export function streamEventsOf(sessionId: string, row: LoggedEvent): StreamEvent[] {
  const data = (row.data ?? {}) as Record<string, unknown>;
  const base = { session_id: sessionId, cursor: row.id };
  switch (row.kind) {
    case EVENT_KINDS.sessionOpened:
    case EVENT_KINDS.sessionResumed: {
      const init = data as unknown as Partial<InitData>;
      if (!init.model) return [];
      return [
        {
          ...base,
          type: 'init',
          workflow_id: init.workflowId ?? '',
          model: init.model,
          workspace: init.workspace ?? '',
          objective: init.objective ?? '',
          limits: {
            max_steps: init.limits?.maxSteps ?? 0,
            max_iterations: init.limits?.maxIterations ?? 0,
            max_minutes: init.limits?.maxMinutes ?? 0,
          },
        },
      ];
    }
    case EVENT_KINDS.stepStart:
      return [{ ...base, type: 'step_start', step: num(data.step), model: str(data.model) }];
    case EVENT_KINDS.modelUsage: {
      const step = num(data.step);
      const events: StreamEvent[] = [];
      if (typeof data.text === 'string' && data.text.trim() !== '') {
        events.push({ ...base, type: 'assistant_text', step, text: data.text });
      }
      for (const call of (data.toolCalls ?? []) as LoggedToolCall[]) {
        const args = clipBytes(call.arguments ?? '');
        events.push({
          ...base,
          type: 'tool_call',
          step,
          tool_call_id: call.id,
          name: call.name,
          summary: call.summary ?? call.name,
          arguments: args.text,
          arguments_truncated: args.truncated,
        });
      }
      const usage = (data.usage ?? {}) as Partial<RequestUsage>;
      events.push({ ...base, type: 'usage', step, model: str(data.model), ...usageFields(usage) });
      return events;
    }
    case EVENT_KINDS.tool:
      return [
        {
          ...base,
          type: 'tool_result',
          tool_call_id: str(data.toolCallId),
          name: str(data.toolName),
          ok: data.ok !== false,
          output: clipBytes(str(data.head ?? data.firstLine)).text,
          bytes: num(data.bytes),
          spool_id: typeof data.spoolId === 'number' ? data.spoolId : null,
        },
      ];
    case EVENT_KINDS.taskUpdate:
      return [{ ...base, type: 'task_update', tasks: ((data.tasks ?? []) as TaskView[]).map(taskFields) }];
    case EVENT_KINDS.compaction:
      return [
        {
          ...base,
          type: 'compaction',
          before_tokens: num(data.beforeTokens),
          after_tokens: num(data.afterTokens),
          kind: compactionKind(data.kind),
          text: str(data.text),
        },
      ];
    case EVENT_KINDS.notice:
      return [{ ...base, type: 'notice', text: str(data.text) }];
    case EVENT_KINDS.steering:
      return [{ ...base, type: 'steering', id: str(data.id), from: str(data.from), text: str(data.text) }];
    case EVENT_KINDS.approvalRequested:
    case EVENT_KINDS.approval:
      return [
        {
          ...base,
          type: 'approval',
          tool_call_id: str(data.toolCallId),
          command: str(data.command),
          decision:
            row.kind === EVENT_KINDS.approvalRequested
              ? 'requested'
              : data.decision === 'approved'
                ? 'approved'
                : 'denied',
          reason:
            typeof data.reason === 'string'
              ? data.reason
              : typeof data.justification === 'string'
                ? data.justification
                : null,
          by: typeof data.by === 'string' ? data.by : null,
        },
      ];
    case EVENT_KINDS.goalEnded: {
      const ended = data as unknown as GoalEndedData;
      const usage = ended.usage;
      return [
        {
          ...base,
          type: 'result',
          status: str(ended.status),
          reason: ended.reason ?? null,
          summary: ended.summary ?? null,
          steps: ended.steps ?? 0,
          iterations: ended.iterations ?? 0,
          duration_ms: ended.elapsedMs ?? 0,
          total_cost_usd: ended.costUsd ?? 0,
          usage: {
            ...usageFields(usage ?? {}),
            total_tokens: usage?.totalTokens ?? 0,
            requests: usage?.requests ?? 0,
          },
          verified: ended.verified === true,
          checks: (ended.checks ?? []).map(streamCheck),
        },
      ];
    }
    case EVENT_KINDS.budget: {
      const view = data as Partial<BudgetEventData>;
      return [
        {
          ...base,
          type: 'budget',
          at: view.at === 'raised' ? 'raised' : 'cap',
          cap: view.cap === 'cost' || view.cap === 'tokens' ? view.cap : null,
          reason: typeof view.reason === 'string' ? view.reason : null,
          spent_usd: dollars(view.spentUsd),
          reserved_usd: dollars(view.reservedUsd),
          cap_usd: typeof view.capUsd === 'number' ? view.capUsd : null,
          spent_tokens: num(view.spentTokens),
          reserved_tokens: num(view.reservedTokens),
          cap_tokens: typeof view.capTokens === 'number' ? view.capTokens : null,
        },
      ];
    }
    case EVENT_KINDS.failover: {
      const direction =
        data.direction === 'probe' || data.direction === 'primary' ? data.direction : 'backup';
      return [
        {
          ...base,
          type: 'failover',
          step: num(data.step),
          from: typeof data.from === 'string' ? data.from : '',
          to: typeof data.to === 'string' ? data.to : '',
          direction,
          reason: typeof data.reason === 'string' ? data.reason : '',
        },
      ];
    }
    default: {
      const text = NOTICE_KINDS[row.kind]?.(data, sessionId);
      return text === undefined ? [] : [{ ...base, type: 'notice', text }];
    }
  }
}

function usageFields(usage: Partial<RequestUsage>) {
  const input = usage.inputTokens ?? 0;
  const cacheRead = usage.cacheReadTokens ?? 0;
  return {
    input_tokens: input,
    output_tokens: usage.outputTokens ?? 0,
    cache_read_tokens: cacheRead,
    cache_write_tokens: usage.cacheWriteTokens ?? 0,
    cache_read_share: roundedShare({ inputTokens: input, cacheReadTokens: cacheRead }),
  };
}

function taskFields(task: TaskView) {
  return {
    id: task.id,
    content: task.content,
    status: task.status,
    blocked_by: task.blocked_by,
    ready: task.ready,
  };
}

function compactionKind(kind: unknown): 'auto' | 'manual' | 'forced' | 'recovery' {
  return kind === 'manual' || kind === 'forced' || kind === 'recovery' ? kind : 'auto';
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

/** A dollar amount as logged (num() would cut the cents off). */
function dollars(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value) : 0;
}

/** A check as stream-json's `result` shows it (snake case, like the rest of the stream). */
export function streamCheck(check: GoalEndedCheck): {
  command: string;
  exit_code: number | null;
  ok: boolean;
  problem: string | null;
  spool: string | null;
} {
  return {
    command: check.command,
    exit_code: check.exitCode,
    ok: check.ok,
    problem: check.problem ?? null,
    spool: check.spool ?? null,
  };
}
