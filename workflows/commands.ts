/**
 * What each request of the command queue does, carried out by the main loop (command-queue.ts):
 * steering delivered to the transcript, app commands, compactions, auto-compact switches, approval
 * answers, and the notice of a request that was refused on arrival. The model never sees a command.
 */
import { applyAgentClaim, withHolders } from '../core/agent-tasks';
import { type AppCommand, appCommandHelp } from '../core/app-commands';
import { setAutoCompact } from '../core/compaction/failure-budget';
import { EVENT_KINDS } from '../core/event-kinds';
import { type GoalStatus, noteAction } from '../core/goal';
import type { InboxRequest } from '../core/goal-inbox';
import { renderJobs } from '../core/jobs-registry';
import { storeKeys } from '../core/store-keys';
import { taskView } from '../core/task-graph';
import { clipHead } from '../core/text';
import { isSignOff } from '../core/verify';
import { storeActivities } from './activities-proxy';
import { tellChildren } from './agent-tool';
import { breakerAfterSteering } from './breaker-gate';
import { compact, compactionOf, ensureBudget } from './compaction';
import type { SteerResult } from './definitions';
import { forgetFailover } from './failover';
import { compactionHostOf } from './goal-compaction-host';
import type { ApprovalBox } from './goal-control';
import type { GoalRun } from './goal-run-port';
import { policyOf } from './policy';

/** Longest sender name kept in the transcript and events. */
const MAX_FROM_CHARS = 100;

/** What carrying out a request came to. */
export type CommandOutcome =
  /** Done: the waiting handler gets `value`. */
  | { kind: 'answer'; value: unknown; notice?: string }
  /** Not done, for a reason the sender is told. */
  | { kind: 'refused'; message: string; notice?: string }
  /** A /clear: answered once the fresh session has started. */
  | { kind: 'clear'; notice?: string }
  /** Nothing to answer (a request refused on arrival, now reported). */
  | { kind: 'none'; notice?: string };

/** The queue's parts a command needs. */
export interface CommandContext {
  readonly approvals: ApprovalBox;
}

/** Carries out one request. Throws when an activity it needs fails; the queue makes that a notice. */
export async function carryOut(
  run: GoalRun,
  context: CommandContext,
  request: InboxRequest,
): Promise<CommandOutcome> {
  switch (request.kind) {
    case 'steer': {
      const seq = await run.deliverSteering({ id: request.id, text: request.text, from: clip(request.from) });
      const breaker = breakerAfterSteering(run);
      return { kind: 'answer', value: { kind: 'message', seq, ...breaker } satisfies SteerResult };
    }
    case 'command':
      return runAppCommand(run, request);
    case 'compact': {
      const result = await compactNow(run, request.topic);
      return { kind: 'answer', value: result };
    }
    case 'auto-compact': {
      const compaction = compactionOf(run.state);
      run.state = noteAction(
        {
          ...run.state,
          compaction: { ...compaction, autoCompact: setAutoCompact(compaction.autoCompact, request.on) },
        },
        `auto-compact turned ${request.on ? 'on' : 'off'}`,
      );
      return { kind: 'answer', value: policyOf(run.state) };
    }
    case 'approval': {
      if (!run.state.approval || context.approvals.answer) {
        return { kind: 'refused', message: 'no command is waiting for approval' };
      }
      const reply = { ...request.reply, from: clip(request.reply.from || 'unknown') };
      context.approvals.answer = reply;
      return {
        kind: 'answer',
        value:
          reply.decision === 'approve'
            ? isSignOff(run.state.approval)
              ? 'signed off: the goal is completed'
              : 'approved: the command runs outside the sandbox now'
            : 'denied: the model is told why',
      };
    }
    case 'host': {
      const text = run.setHost(request.queue, clip(request.from));
      return { kind: 'answer', value: text };
    }
    case 'agent-tasks':
      await applyAgentTasks(run, request);
      return { kind: 'none' };
    case 'refused': {
      await run.untilStored('recordEvent', () =>
        storeActivities.recordEvent({
          sessionId: run.state.goal.sessionId,
          kind: 'command',
          data: { text: request.text, from: clip(request.from), refused: request.why },
          key: storeKeys.commandEvent(request.id),
        }),
      );
      return {
        kind: 'none',
        notice: `${request.text.split(/\s+/)[0] || 'a message'} from ${clip(request.from)} was ignored: ${request.why}`,
      };
    }
  }
}

/** A sub-agent's todo-write on this goal's graph (issue 27 §2), with the task-update event. */
async function applyAgentTasks(
  run: GoalRun,
  request: Extract<InboxRequest, { kind: 'agent-tasks' }>,
): Promise<void> {
  const outcome = applyAgentClaim(
    run.state.tasks,
    run.state.taskHolders ?? {},
    run.state.agents ?? [],
    request,
  );
  run.session.note(outcome.text);
  if (!outcome.ok) return;
  run.state = { ...run.state, tasks: outcome.tasks, taskHolders: outcome.holders };
  await run.saveState(false, {
    kind: EVENT_KINDS.taskUpdate,
    data: { tasks: withHolders(taskView(run.state.tasks), outcome.holders) },
    key: storeKeys.taskUpdateEvent(request.id),
  });
}

/** An app command (spec F-CMDS). */
async function runAppCommand(
  run: GoalRun,
  request: Extract<InboxRequest, { kind: 'command' }>,
): Promise<CommandOutcome> {
  const { command } = request;
  const done = (text: string, extra: Partial<Extract<SteerResult, { kind: 'command' }>> = {}) => ({
    kind: 'answer' as const,
    value: { kind: 'command', command: command.name, text, ...extra } satisfies SteerResult,
  });
  await run.untilStored('recordEvent', () =>
    storeActivities.recordEvent({
      sessionId: run.state.goal.sessionId,
      kind: 'command',
      data: { command: command.name, text: request.text, from: clip(request.from) },
      key: storeKeys.commandEvent(request.id),
    }),
  );
  switch (command.name) {
    case 'help':
      return done(appCommandHelp());
    case 'jobs':
      return done(renderJobs(run.state.jobs, Date.now()));
    case 'pause': {
      const text = run.session.pause();
      // Pausing a parent pauses its children (issue 27 §2); none runs in goals without sub-agents.
      await tellChildren(run, '/pause', request.id);
      return done(text);
    }
    case 'unpause': {
      const text = run.session.unpause();
      await tellChildren(run, '/unpause', request.id);
      return done(text);
    }
    case 'limits': {
      const text = run.session.setLimits(command.limits);
      // A running clock keeps its timer in step with the new time limit.
      if (run.session.clockRunning) run.timeLimit.arm(run.session.remainingMs());
      return done(text);
    }
    case 'rename': {
      await run.untilStored('renameSession', () =>
        storeActivities.renameSession({ sessionId: run.state.goal.sessionId, name: command.title }),
      );
      return done(run.session.rename(command.title));
    }
    case 'model': {
      const { goal } = run.state;
      const model = await run.untilStored('checkModel', () =>
        storeActivities.checkModel({
          model: command.model,
          baseUrl: goal.baseUrl,
          ...(goal.apiKeyEnv ? { apiKeyEnv: goal.apiKeyEnv } : {}),
          // A money cap counts by the card's prices: a model without them is refused (issue 24 §3).
          ...(goal.limits.maxCostUsd !== undefined ? { maxCostUsd: goal.limits.maxCostUsd } : {}),
        }),
      );
      const text = run.session.setModel(model);
      // The next step boundary resolves the new model's window and prices (ensureBudget).
      const compaction = run.state.compaction;
      if (compaction) run.state = { ...run.state, compaction: { ...compaction, budget: null, card: null } };
      // The model a person chose is the goal's primary now: no probe takes the goal back to the old one.
      forgetFailover(run);
      return { ...done(text), notice: text };
    }
    case 'compact': {
      const result = await compactNow(run, command.topic);
      return done(result.note ?? `nothing to compact (${result.beforeTokens} tokens)`, {
        compaction: result,
      });
    }
    case 'clear':
      return { kind: 'clear' };
  }
}

/** A compaction asked for by a user: with the model's budget resolved first (a /model may have reset it). */
async function compactNow(run: GoalRun, topic: string | undefined) {
  const host = compactionHostOf(run);
  await ensureBudget(host);
  return compact(host, run.state.steps + 1, { manual: true, topic: topic || undefined });
}

/** What a sender is told when the goal ended before it carried out the request. */
export function refusalText(request: InboxRequest, status: GoalStatus): string {
  const what = request.kind === 'command' ? `/${request.command.name}` : describeKind(request);
  return `the goal ended (${status}) before it carried out ${what}`;
}

function describeKind(request: InboxRequest): string {
  switch (request.kind) {
    case 'compact':
      return 'the compaction';
    case 'auto-compact':
      return 'the auto-compact switch';
    case 'approval':
      return 'the answer';
    default:
      return 'the request';
  }
}

function clip(from: string): string {
  return clipHead(from ?? 'unknown', MAX_FROM_CHARS);
}

/** The command a request carries, if it is one. */
export function commandOf(request: InboxRequest): AppCommand | null {
  return request.kind === 'command' ? request.command : null;
}
