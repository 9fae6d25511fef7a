/**
 * Every message a goal takes, in one place: what a reader needs to know of the goal's message API.
 * Updates check a request in their validator (a bad one never enters history) and put it in the
 * command queue; the signal form, durable while no worker runs, turns a bad request into a notice.
 * No handler here awaits an activity: the main loop carries every request out (command-queue.ts).
 * Queries only read.
 */
import { currentUpdateInfo, setHandler } from '@temporalio/workflow';
import type { AgentTasksRequest } from '../core/agent-tasks';
import { isAppCommand } from '../core/app-commands';
import type { SteeringRequest } from '../core/goal';
import {
  type InboxRequest,
  InboxRequestError,
  MAX_HOST_QUEUE_CHARS,
  steeringRequest,
} from '../core/goal-inbox';
import { parseModelSpec } from '../core/model-spec';
import type { CommandQueue } from './command-queue';
import type { CompactionResult } from './compaction';
import {
  type ApprovalAnswer,
  agentTasksSignal,
  approvalUpdate,
  compactUpdate,
  type HostRequest,
  hostSignal,
  hostUpdate,
  policyQuery,
  type SteerResult,
  setAutoCompactUpdate,
  steerSignal,
  steerUpdate,
} from './definitions';
import type { GoalRun } from './goal-run-port';
import { type policyOf, policyWithStateSize } from './policy';

/** Registers the goal's updates, its signal and the policy query for the command queue. */
export function setupHandlers(run: GoalRun, queue: CommandQueue): void {
  setHandler(
    steerUpdate,
    async (request): Promise<SteerResult> => {
      const repeated = queue.repeatedSteering(request.id);
      if (repeated) return repeated;
      return queue.submit<SteerResult>(steeringRequest(request));
    },
    {
      validator: (request) => {
        if (typeof request?.text !== 'string' || typeof request.id !== 'string') {
          throw new InboxRequestError('a steering request needs an id and a text');
        }
        if (queue.repeatedSteering(request.id)) return;
        checkRequest(run, queue, steeringRequest(request), 'update');
      },
    },
  );

  setHandler(steerSignal, (request) => receiveSteeringSignal(run, queue, request));

  setHandler(
    compactUpdate,
    (topic: string): Promise<CompactionResult> =>
      queue.submit({ kind: 'compact', id: updateId(queue, 'compact'), topic: topic ?? '', from: 'compact' }),
    {
      validator: (topic) =>
        checkRequest(run, queue, { kind: 'compact', id: '', topic: topic ?? '', from: '' }, 'update'),
    },
  );

  setHandler(
    setAutoCompactUpdate,
    (on: boolean) =>
      queue.submit<ReturnType<typeof policyOf>>({
        kind: 'auto-compact',
        id: updateId(queue, 'auto-compact'),
        on: on === true,
        from: 'policy',
      }),
    {
      validator: (on) => {
        if (typeof on !== 'boolean') throw new InboxRequestError('auto-compact takes true or false');
        checkRequest(run, queue, { kind: 'auto-compact', id: '', on, from: '' }, 'update');
      },
    },
  );

  setHandler(
    approvalUpdate,
    (reply: ApprovalAnswer) =>
      queue.submit<string>({ kind: 'approval', id: updateId(queue, 'approval'), reply: { ...reply } }),
    {
      validator: (reply) => {
        if (reply?.decision !== 'approve' && reply?.decision !== 'deny') {
          throw new InboxRequestError('the decision must be "approve" or "deny"');
        }
        checkRequest(run, queue, { kind: 'approval', id: '', reply }, 'update');
      },
    },
  );

  setHandler(
    hostUpdate,
    (request: HostRequest) =>
      queue.submit<string>({
        kind: 'host',
        id: updateId(queue, 'host'),
        queue: request.queue,
        from: request.from,
      }),
    { validator: (request) => checkRequest(run, queue, hostRequest(request, ''), 'update') },
  );

  // A process on its way out: never refused (there is nobody to tell), at worst a no-op.
  setHandler(hostSignal, (request: HostRequest) => {
    try {
      const queued = hostRequest(request, queue.newId('host'));
      checkRequest(run, queue, queued, 'signal');
      queue.inbox.add(queued);
    } catch {
      // The goal is ending, or its queue is full: the host's calls fall back to the shared queue by themselves.
    }
  });

  // A sub-agent's claims (issue 27 §2): durable when sent; one that does not fit is only a note.
  setHandler(agentTasksSignal, (request: AgentTasksRequest) => {
    if (typeof request?.id !== 'string' || typeof request.agentId !== 'string' || !request.args) return;
    if (queue.inbox.has(request.id)) return;
    try {
      const queued: InboxRequest = {
        kind: 'agent-tasks',
        id: request.id,
        agentId: request.agentId,
        args: request.args,
      };
      checkRequest(run, queue, queued, 'signal');
      queue.inbox.add(queued);
    } catch (err) {
      run.session.note(`${request.agentId}'s task update ignored: ${(err as Error).message}`);
    }
  });

  setHandler(policyQuery, () => policyWithStateSize(run.state));
}

/**
 * A steering request that came by signal: durable the moment it was sent, so it cannot be refused
 * to its sender; one that fails its checks becomes a notice instead.
 */
function receiveSteeringSignal(run: GoalRun, queue: CommandQueue, request: SteeringRequest): void {
  const from = typeof request?.from === 'string' ? request.from : 'unknown';
  const text = typeof request?.text === 'string' ? request.text : '';
  const id = typeof request?.id === 'string' ? request.id : queue.newId('signal');
  if (queue.inbox.has(id) || run.state.steeringIds.includes(id)) return;
  let why: string;
  try {
    const queued = steeringRequest({ id, text, from });
    checkRequest(run, queue, queued, 'signal');
    queue.inbox.add(queued);
    return;
  } catch (err) {
    why = (err as Error).message;
  }
  const what = isAppCommand(text) ? text.trim().split(/\s+/)[0] : 'steering';
  run.session.note(`${what} from ${from} ignored: ${why}`);
  if (!queue.inbox.addRefused({ id, text, from }, why)) {
    run.state = { ...run.state, droppedRequests: (run.state.droppedRequests ?? 0) + 1 };
  }
}

/** A host request, checked for shape. */
function hostRequest(request: HostRequest, id: string): InboxRequest {
  const hostQueue = request?.queue;
  if (
    hostQueue !== null &&
    (typeof hostQueue !== 'string' || hostQueue === '' || hostQueue.length > MAX_HOST_QUEUE_CHARS)
  ) {
    throw new InboxRequestError(
      `a host queue is a name of at most ${MAX_HOST_QUEUE_CHARS} characters, or null`,
    );
  }
  return {
    kind: 'host',
    id,
    queue: hostQueue,
    from: typeof request?.from === 'string' ? request.from : 'unknown',
  };
}

/** The queue id of the update being handled. */
function updateId(queue: CommandQueue, prefix: string): string {
  return queue.newId(prefix, currentUpdateInfo()?.id);
}

/** The checks a request must pass before it is queued; throws InboxRequestError saying why not. */
function checkRequest(
  run: GoalRun,
  queue: CommandQueue,
  request: InboxRequest,
  via: 'update' | 'signal',
): void {
  const refusal = queue.refusal(via);
  if (refusal) throw new InboxRequestError(refusal);
  const { session } = run;
  try {
    switch (request.kind) {
      case 'steer':
        session.checkSteering(request);
        if (run.state.status === 'limit_reached') {
          throw new InboxRequestError(
            `the goal is waiting at its limit (${run.state.reason}); raise it first: goalrun limits ${run.state.goal.sessionId} --max-steps N (or /limits)`,
          );
        }
        break;
      case 'command': {
        const { command } = request;
        if (command.name === 'help' || command.name === 'jobs') break;
        session.checkOpen(`run /${command.name}`);
        // Checked here so that `/model opnai:gpt-4o` is refused at once, not after the goal tried it.
        if (command.name === 'model') parseModelSpec(command.model);
        break;
      }
      case 'compact':
        session.checkOpen('compact');
        break;
      case 'auto-compact':
        session.checkOpen('change auto-compact');
        break;
      case 'approval':
        session.checkApprovalAnswer();
        if (queue.approvals.answer || queue.inbox.requests.some((queued) => queued.kind === 'approval')) {
          throw new InboxRequestError('the command waiting for approval has already been answered');
        }
        break;
      case 'host':
        session.checkOpen('change its host');
        break;
      case 'refused':
      case 'agent-tasks':
        break;
    }
  } catch (err) {
    if (err instanceof InboxRequestError) throw err;
    throw new InboxRequestError((err as Error).message);
  }
  queue.inbox.checkRoom(request);
}
