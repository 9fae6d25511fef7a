/**
 * Steering of goals started before the command queue (patch `command-queue`; remove with it): the
 * `steer` update and signal carry out app commands in the handler, and the approval update. Messages for the model wait for the next step boundary, so a
 * running step is never interrupted and a tool call is never separated from its result.
 */
import { condition, setHandler } from '@temporalio/workflow';
import { type AppCommand, appCommandHelp, isAppCommand, parseAppCommand } from '../../core/app-commands';
import type { SteeringRequest } from '../../core/goal';
import { GoalRequestError } from '../../core/goal-session';
import { renderJobs } from '../../core/jobs-registry';
import { storeKeys } from '../../core/store-keys';
import { storeActivities } from '../activities-proxy';
import {
  type ApprovalAnswer,
  approvalUpdate,
  type SteerResult,
  steerSignal,
  steerUpdate,
} from '../definitions';
import { innermostMessage } from '../failures';
import type { ApprovalBox } from '../goal-control';
import type { GoalRun } from '../goal-run-port';
import type { CompactionControl } from './compaction-control';

/** Longest sender name shown in the transcript. */
const MAX_FROM_CHARS = 100;

/** Requests that only the main loop can carry out, between steps. */
export interface LoopRequests {
  /** A /clear waits for the loop to end the session and start the fresh one. */
  clear: { requested: boolean; newSessionId: string | null };
  /** Transcript notes to write at the next step boundary (a model switch). */
  notes: string[];
}

/** Registers the steering and approval handlers. */
export function setupSteering(
  run: GoalRun,
  control: CompactionControl,
  approvals: ApprovalBox,
  loop: LoopRequests,
): void {
  setHandler(
    steerUpdate,
    async (request: SteeringRequest): Promise<SteerResult> => {
      if (isAppCommand(request.text))
        return runCommand(run, control, loop, parseAppCommand(request.text), request);
      const known = run.deliveredSteering.get(request.id);
      if (known !== undefined) return { kind: 'message', seq: known, duplicate: true };
      if (
        !run.session.queueSteering(request) &&
        !run.session.pendingSteering.some((p) => p.id === request.id)
      ) {
        // Delivered in an earlier run of this workflow (before continue-as-new): the seq is not known here.
        return { kind: 'message', seq: -1, duplicate: true };
      }
      await condition(() => run.deliveredSteering.has(request.id) || run.undeliveredSteering.has(request.id));
      const seq = run.deliveredSteering.get(request.id);
      if (seq !== undefined) return { kind: 'message', seq };
      return { kind: 'message', seq: -1, undelivered: run.undeliveredSteering.get(request.id) };
    },
    { validator: (request: SteeringRequest) => checkRequest(run, request) },
  );

  // The signal form is durable the moment it is sent, with no worker running; invalid ones are noted.
  setHandler(steerSignal, (request: SteeringRequest) => {
    try {
      checkRequest(run, request);
    } catch (err) {
      run.session.note(`steering from ${request.from ?? 'unknown'} ignored: ${(err as Error).message}`);
      return;
    }
    if (isAppCommand(request.text)) {
      // Before 0.2.0 a failed command here was an unhandled rejection that failed every workflow task
      // for good. Catching it changes no recorded command (those tasks never completed), so a goal
      // stuck that way goes on with this build.
      runCommand(run, control, loop, parseAppCommand(request.text), request).catch((err: unknown) => {
        const text = `/${parseAppCommand(request.text).name} from ${clip(request.from)} failed: ${innermostMessage(err)}`;
        run.session.note(text);
        loop.notes.push(text);
      });
      return;
    }
    run.session.queueSteering(request);
  });

  setHandler(
    approvalUpdate,
    (reply: ApprovalAnswer) => {
      approvals.answer = { ...reply, from: clip(reply.from || 'unknown') };
      return reply.decision === 'approve'
        ? 'approved: the command runs outside the sandbox now'
        : 'denied: the model is told why';
    },
    {
      validator: (reply: ApprovalAnswer) => {
        if (reply?.decision !== 'approve' && reply?.decision !== 'deny') {
          throw new GoalRequestError('the decision must be "approve" or "deny"');
        }
        run.session.checkApprovalAnswer();
      },
    },
  );
}

/** The checks a steering request must pass before it is accepted. */
function checkRequest(run: GoalRun, request: SteeringRequest): void {
  if (typeof request?.text !== 'string' || typeof request.id !== 'string') {
    throw new GoalRequestError('a steering request needs an id and a text');
  }
  if (isAppCommand(request.text)) {
    const command = parseAppCommand(request.text);
    checkCommand(run, command);
    return;
  }
  run.session.checkSteering(request);
  if (run.state.status === 'limit_reached') {
    throw new GoalRequestError(
      `the goal is waiting at its limit (${run.state.reason}); raise it first with /limits (goalrun limits ${run.state.goal.sessionId} --max-steps N)`,
    );
  }
}

/** The checks of one command. */
function checkCommand(run: GoalRun, command: AppCommand): void {
  if (command.name === 'help' || command.name === 'jobs') return;
  run.session.checkOpen(`run /${command.name}`);
}

/** Carries out an app command; the model never sees it. */
async function runCommand(
  run: GoalRun,
  control: CompactionControl,
  loop: LoopRequests,
  command: AppCommand,
  request: SteeringRequest,
): Promise<SteerResult> {
  const done = (
    text: string,
    extra: Partial<Extract<SteerResult, { kind: 'command' }>> = {},
  ): SteerResult => ({
    kind: 'command',
    command: command.name,
    text,
    ...extra,
  });
  await storeActivities.recordEvent({
    sessionId: run.state.goal.sessionId,
    kind: 'command',
    data: { command: command.name, text: request.text, from: clip(request.from) },
    key: storeKeys.commandEvent(request.id),
  });
  switch (command.name) {
    case 'help':
      return done(appCommandHelp());
    case 'jobs':
      return done(renderJobs(run.state.jobs, Date.now()));
    case 'pause':
      return done(run.session.pause());
    case 'unpause':
      return done(run.session.unpause());
    case 'limits': {
      const text = run.session.setLimits(command.limits);
      // A running clock keeps its timer in step with the new time limit.
      if (run.session.clockRunning) run.timeLimit.arm(run.session.remainingMs());
      return done(text);
    }
    case 'rename': {
      const text = run.session.rename(command.title);
      await storeActivities.renameSession({ sessionId: run.state.goal.sessionId, name: command.title });
      return done(text);
    }
    case 'model': {
      const model = await storeActivities.checkModel({
        model: command.model,
        baseUrl: run.state.goal.baseUrl,
      });
      const text = run.session.setModel(model);
      // The next step resolves the new model's budget; the switch goes into the transcript there.
      const compaction = run.state.compaction;
      if (compaction) run.state = { ...run.state, compaction: { ...compaction, budget: null, card: null } };
      loop.notes.push(text);
      return done(text);
    }
    case 'compact': {
      const result = await control.request(command.topic);
      return done(result.note ?? `nothing to compact (${result.beforeTokens} tokens)`, {
        compaction: result,
      });
    }
    case 'clear': {
      loop.clear.requested = true;
      await condition(() => loop.clear.newSessionId !== null);
      return done(`cleared; the goal goes on in session ${loop.clear.newSessionId}`, {
        newSessionId: loop.clear.newSessionId!,
      });
    }
  }
}

function clip(from: string): string {
  return (from ?? 'unknown').slice(0, MAX_FROM_CHARS);
}
