/**
 * The goal's inbox: everything a goal is told while it runs (steering text, app commands, compaction
 * requests, auto-compact switches, approval answers) waits here until the workflow's main loop
 * carries it out, as in Temporal's safe-message-handlers sample. Message handlers only check a request
 * and put it in; the inbox lives in the goal state, so a request sent by signal while no worker runs
 * survives a crash and continue-as-new; and it is bounded, so the state stays small.
 *
 * Pure: the workflow keeps one in its state, tests drive it without Temporal.
 */

import type { AgentTasksRequest } from './agent-tasks';
import { type AppCommand, AppCommandError, isAppCommand, parseAppCommand } from './app-commands';
import { jsonBytes } from './compaction/state-size';
import { clip } from './text';

/** Longest host queue name a goal takes. */
export const MAX_HOST_QUEUE_CHARS = 200;
/** Requests one goal keeps queued at most; a request past it is refused. */
export const MAX_INBOX_REQUESTS = 64;
/**
 * JSON bytes the queued requests may take together: they live in the goal's control state, which
 * continue-as-new carries (core/state-bounds.ts). A long steering message fits; a flood waits its turn.
 */
export const MAX_INBOX_BYTES = 40 * 1024;
/** How much of a refused request's text the inbox keeps, to name it in the notice. */
export const REFUSED_TEXT_CHARS = 200;

/** An approval answer on its way to the step that waits for it. */
export interface ApprovalReply {
  decision: 'approve' | 'deny';
  reason?: string;
  from: string;
}

/** One queued request. `id` is the sender's id (a steering id) or the update's. */
export type InboxRequest =
  /** A message for the model: delivered at the next step boundary. */
  | { kind: 'steer'; id: string; text: string; from: string }
  /** An app command (`/pause`, `/limits …`), handled by goalrun, never seen by the model. */
  | { kind: 'command'; id: string; text: string; from: string; command: AppCommand }
  /** `goalrun compact [topic]`: a compaction at the next step boundary. */
  | { kind: 'compact'; id: string; topic: string; from: string }
  /** `goalrun policy --auto-compact on|off`. */
  | { kind: 'auto-compact'; id: string; on: boolean; from: string }
  /** `goalrun approve|deny`. */
  | { kind: 'approval'; id: string; reply: ApprovalReply }
  /** A request that came by signal and failed its checks: the loop makes it a visible notice. */
  | { kind: 'refused'; id: string; text: string; from: string; why: string }
  /** A foreground `run`/`resume` takes the goal's steps (queue), or gives them back (null). */
  | { kind: 'host'; id: string; queue: string | null; from: string }
  /** A sub-agent's todo-write on this goal's task graph (issue 27 §2): applied in arrival order. */
  | ({ kind: 'agent-tasks' } & AgentTasksRequest);

/** Where the main loop stands when it looks at the inbox. */
export type InboxPhase =
  /** Between steps (or waiting there: paused, at a limit, before continue-as-new): everything runs. */
  | 'boundary'
  /** A step is running (a model call, a tool, an approval wait): what needs the boundary waits. */
  | 'step';

/** Raised by the checks a request must pass; the message is shown to the sender. */
export class InboxRequestError extends Error {
  readonly type = 'InboxRequestError';
  constructor(message: string) {
    super(message);
    this.name = 'InboxRequestError';
  }
}

/** Whether a request can only run at a step boundary: it writes to the transcript or compacts it. */
export function needsBoundary(request: InboxRequest): boolean {
  switch (request.kind) {
    case 'steer':
    case 'compact':
      return true;
    case 'command':
      return request.command.name === 'compact' || request.command.name === 'clear';
    default:
      return false;
  }
}

/** A steering text as the request it stands for: a message, or an app command (parsed, so it is checked). */
export function steeringRequest(request: { id: string; text: string; from: string }): InboxRequest {
  if (!isAppCommand(request.text)) return { kind: 'steer', ...request };
  try {
    return { kind: 'command', ...request, command: parseAppCommand(request.text) };
  } catch (err) {
    if (err instanceof AppCommandError) throw new InboxRequestError(err.message);
    throw err;
  }
}

/** How a request is named in a notice, e.g. when carrying it out failed. */
export function describeRequest(request: InboxRequest): string {
  switch (request.kind) {
    case 'command':
      return `/${request.command.name} from ${request.from}`;
    case 'compact':
      return 'the compaction';
    case 'auto-compact':
      return `auto-compact ${request.on ? 'on' : 'off'}`;
    case 'approval':
      return `the ${request.reply.decision === 'approve' ? 'approval' : 'denial'} from ${request.reply.from}`;
    default:
      return `the request from ${'from' in request ? request.from : 'unknown'}`;
  }
}

/** The queue itself: a list of requests held in the goal state, and the rules that bound it. */
export class GoalInbox {
  constructor(
    private readonly read: () => InboxRequest[],
    private readonly write: (requests: InboxRequest[]) => void,
  ) {}

  /** The queued requests, oldest first. */
  get requests(): InboxRequest[] {
    return this.read();
  }

  /** Whether a request with this id waits. */
  has(id: string): boolean {
    return this.read().some((request) => request.id === id);
  }

  /** Throws when the request would not fit. */
  checkRoom(request: InboxRequest): void {
    const queued = this.read();
    if (queued.length >= MAX_INBOX_REQUESTS) {
      throw new InboxRequestError(
        `the goal already has ${queued.length} requests waiting (at most ${MAX_INBOX_REQUESTS}); wait for it to take them at its next step`,
      );
    }
    const bytes = jsonBytes(queued) + jsonBytes(request);
    if (bytes > MAX_INBOX_BYTES) {
      throw new InboxRequestError(
        `the goal's queue would hold ${bytes} bytes (at most ${MAX_INBOX_BYTES}); wait for it to take the waiting requests, or send a shorter message`,
      );
    }
  }

  /** Queues a request that passed its checks. */
  add(request: InboxRequest): void {
    this.checkRoom(request);
    this.write([...this.read(), request]);
  }

  /**
   * Queues a request that failed its checks, to be reported. A full queue keeps no record of it; the
   * caller counts it instead.
   */
  addRefused(request: { id: string; text: string; from: string }, why: string): boolean {
    const refused: InboxRequest = {
      kind: 'refused',
      id: request.id,
      text: clipValue(request.text, REFUSED_TEXT_CHARS),
      from: clipValue(request.from, REFUSED_TEXT_CHARS),
      why: clipValue(why, REFUSED_TEXT_CHARS * 2),
    };
    try {
      this.add(refused);
      return true;
    } catch {
      return false;
    }
  }

  /** The oldest request that can run in this phase, taken off the queue. */
  takeNext(phase: InboxPhase, accepts: (request: InboxRequest) => boolean = () => true): InboxRequest | null {
    const queued = this.read();
    const index = queued.findIndex(
      (request) => (phase === 'boundary' || !needsBoundary(request)) && accepts(request),
    );
    if (index < 0) return null;
    this.write([...queued.slice(0, index), ...queued.slice(index + 1)]);
    return queued[index];
  }

  /** Whether a request can run in this phase. */
  hasDue(phase: InboxPhase, accepts: (request: InboxRequest) => boolean = () => true): boolean {
    return this.read().some(
      (request) => (phase === 'boundary' || !needsBoundary(request)) && accepts(request),
    );
  }

  /** Takes every request off the queue (the goal ends: each is answered as not carried out). */
  takeAll(): InboxRequest[] {
    const queued = this.read();
    if (queued.length > 0) this.write([]);
    return queued;
  }
}

function clipValue(text: string, max: number): string {
  return clip(typeof text === 'string' ? text : String(text), max);
}
