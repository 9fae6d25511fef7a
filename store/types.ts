import type { SavedState } from '../core/fork-point';
import type { GoalStatus } from '../core/goal';
import type { MessageMeta, StoredMessage, TranscriptEntry } from '../core/messages';
import type { BilledAttemptRecord } from '../core/paid-calls';
import type { StateWrite } from '../core/state-write';
import type { DailyBudgetView, DailyReservation } from './daily-budget';
import type { StoredImage, StoredImageRef } from './images';
import type { MemoryMatch, MemoryQuery } from './memory-search';
import type { PaidCall } from './paid-calls';
import type { ForkRecord } from './session-fork';
import type { SessionLockAttempt } from './session-locks';
import type { NameClaim } from './session-names';
import type { StreamDelta } from './stream-deltas';

export type { GoalStatus };

/** One row of the session catalog. */
export interface SessionRow {
  id: string;
  projectDir: string;
  projectHash: string;
  objective: string;
  status: GoalStatus;
  reason: string | null;
  model: string;
  workflowId: string;
  /** The goal's saved control state (small JSON), or null before the goal first ran. */
  goalState: unknown | null;
  /** The name given with /rename, or null. */
  name?: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** When `goalrun clean` removed its transcript (the row stays as a marker), or null. */
  cleanedAt?: Date | null;
}

/** A stored event: tool traces, progress, notices, checkpoints. */
export interface EventRow {
  id: number;
  sessionId: string;
  kind: string;
  data: unknown;
  createdAt: Date;
}

/** A page of a spooled tool output. Offsets are byte offsets into the UTF-8 text. */
export interface SpoolPage {
  spoolId: number;
  toolName: string;
  size: number;
  offset: number;
  content: string;
  nextOffset: number | null;
}

/** A saved checkpoint of control state: goal state and task graph. */
export interface CheckpointRow {
  id: number;
  sessionId: string;
  goalState: unknown;
  tasks: unknown;
  createdAt: Date;
}

/** Fields of a new session. */
export interface NewSession {
  id: string;
  projectDir: string;
  projectHash: string;
  objective: string;
  model: string;
  workflowId: string;
}

/** What else to write in the same transaction as a message. */
export interface MessageWriteOptions {
  meta?: MessageMeta;
  /** A change to the saved goal state. */
  state?: StateWrite;
  /** Events, each written once under its key. */
  event?: StoreEvent | StoreEvent[];
  /** The paid call the message answers: its ledger row, written once under its key, commits with it. */
  paidCall?: PaidCall;
}

/** An event to write: a kind, its data, and a key that makes the write idempotent. */
export interface StoreEvent {
  kind: string;
  data: unknown;
  key?: string;
}

/** The facts of a tool result that compaction's stubs need (bytes, spool id, edges, status). */
export interface ToolResultFacts {
  ok: boolean;
  changedWorkspace: boolean;
  /** UTF-8 bytes of the full output. */
  bytes: number;
  /** Characters (code points) of the full output. */
  chars?: number;
  /** The spool copy of the full output, when it was spooled. */
  spoolId?: number;
  /** Lines of the full output. */
  lines: number;
  firstLine: string;
  lastLine: string;
  /** Compact JSON of the call's arguments, long strings clipped. */
  argsDigest: string;
}

/** A tool result to store whole: spool row, tool event and result message, all or none. */
export interface ToolResultRecord {
  sessionId: string;
  toolCallId: string;
  toolName: string;
  /** Key of the result message (storeKeys.toolResult). */
  messageKey: string;
  /** Key of the tool event (storeKeys.toolEvent). */
  eventKey: string;
  /** The full output; spooled when given. */
  spoolContent?: string;
  /** Builds the result message once the spool id is known (the truncation footer names it). */
  message: (spoolId: number | undefined) => StoredMessage;
  facts: Omit<ToolResultFacts, 'spoolId'>;
  /** More fields for the tool event (attempt, job), beside the facts. */
  eventExtra?: Record<string, unknown>;
}

/** What a model step finds when it opens (SessionStore.openStep). */
export interface StepOpening {
  /** The answer an earlier attempt stored, or null. */
  stored: TranscriptEntry | null;
  session: SessionRow | null;
  /** Whether someone holds a lease on the session's partial messages now. */
  watched: boolean;
}

/** What recordToolResult stored, or found stored by an earlier attempt. */
export interface RecordedToolResult {
  seq: number;
  /** False when an earlier attempt had already stored the result (nothing was written now). */
  created: boolean;
  message: StoredMessage;
  facts: ToolResultFacts;
}

/**
 * The session store. Every write that an activity makes is keyed, so a retried activity writes
 * nothing twice. Messages are append-only: nothing here updates or deletes a message.
 */
export interface SessionStore {
  /** Creates the session row; a second call with the same id changes nothing. */
  createSession(session: NewSession): Promise<void>;
  getSession(id: string): Promise<SessionRow | null>;
  /** Finds a session by session id or workflow id. */
  findSession(idOrWorkflowId: string): Promise<SessionRow | null>;
  /** Newest first. */
  listSessions(limit?: number): Promise<SessionRow[]>;
  updateSession(
    id: string,
    patch: { status?: GoalStatus; reason?: string | null; goalState?: unknown; model?: string },
  ): Promise<void>;
  /** Deletes a session and everything that belongs to it (messages, events, spool, checkpoints). */
  deleteSession(id: string): Promise<void>;

  /**
   * Appends a message under an idempotency key; when the key exists, returns the stored row untouched.
   * The options are written in the same transaction (a state write is applied even when the key exists).
   */
  appendMessage(
    sessionId: string,
    key: string,
    message: StoredMessage,
    options?: MessageWriteOptions,
  ): Promise<{ seq: number; created: boolean }>;
  /** Applies a change to the saved goal state (and, for a full write, adds a checkpoint row). */
  writeGoalState(sessionId: string, write: StateWrite, event?: MessageWriteOptions['event']): Promise<void>;
  /** Sets the session's name (/rename); throws SessionNameTaken when another session of its project has it. */
  renameSession(id: string, name: string): Promise<void>;
  /** Creates a named session with its operation lock taken, or returns the project's session of that name. */
  claimSessionName(
    session: NewSession & { name: string },
    lock: { operation: string; holder: string; ttlMs: number },
  ): Promise<NameClaim>;
  /** The session of one of these project hashes with this name, or null. */
  findSessionByName(projectHashes: string[], name: string): Promise<SessionRow | null>;
  /** Sessions of these projects (every project when null), most recently active first. */
  listProjectSessions(projectHashes: string[] | null, limit: number): Promise<SessionRow[]>;
  /** Takes a session's operation lock for ttlMs, unless another holder's lease is still running. */
  tryLockSession(
    sessionId: string,
    operation: string,
    holder: string,
    ttlMs: number,
  ): Promise<SessionLockAttempt>;
  /** Gives a session's operation lock back, if this holder has it. */
  unlockSession(sessionId: string, holder: string): Promise<void>;
  /** Full-text search over stored messages (issue 17 memory), best first. */
  searchMemory(query: MemoryQuery): Promise<MemoryMatch[]>;
  /**
   * Removes a stopped session's messages, events, spool rows, checkpoints and workspace contexts in one
   * transaction and marks its row cleaned; false (nothing removed) when it is not stopped or is gone.
   */
  cleanSession(id: string, cleanableStatuses: readonly string[]): Promise<boolean>;
  /** Writes a fork's session row and its copy of the parent's messages up to the cut, in one transaction. */
  forkSession(record: ForkRecord): Promise<number>;
  /** Every saved checkpoint state of a session, oldest first. */
  checkpointStates(sessionId: string): Promise<SavedState[]>;
  /** Input plus output tokens of the session's newest model request, or null before its first. */
  latestRequestTokens(sessionId: string): Promise<number | null>;
  /** The id of the session's newest event, or 0: a cursor that follows only what comes next. */
  lastEventId(sessionId: string): Promise<number>;
  /** The event stored under a key, or null. */
  getEventByKey(sessionId: string, key: string): Promise<EventRow | null>;
  getMessageByKey(sessionId: string, key: string): Promise<TranscriptEntry | null>;
  /**
   * A model step's opening in one round trip: the answer stored under `answerKey`, the session and
   * its watch; logs `event` once when the session exists (step-opening.ts).
   */
  openStep(sessionId: string, answerKey: string, event: StoreEvent & { key: string }): Promise<StepOpening>;
  /** The session's messages stored under these keys, by key (absent keys are not in the map). */
  getMessagesByKeys(sessionId: string, keys: string[]): Promise<Map<string, TranscriptEntry>>;
  /** Which of these message keys the session has. */
  existingMessageKeys(sessionId: string, keys: string[]): Promise<Set<string>>;
  /** Messages in order, optionally bounded by sequence numbers (inclusive). */
  listMessages(sessionId: string, range?: { fromSeq?: number; toSeq?: number }): Promise<TranscriptEntry[]>;
  countMessages(sessionId: string): Promise<number>;
  /** In one read, in order: the messages with these seqs and those from `fromSeq` to `toSeq` (inclusive). */
  listMessagesForContext(
    sessionId: string,
    seqs: number[],
    fromSeq: number,
    toSeq: number,
  ): Promise<TranscriptEntry[]>;

  /** Appends an event; with a key, a second call with the same key writes nothing. */
  appendEvent(sessionId: string, kind: string, data: unknown, key?: string): Promise<void>;
  /** When the session last logged an event of one of these kinds, or null (e.g. the last finished step). */
  lastEventAt(sessionId: string, kinds: string[]): Promise<Date | null>;
  /** Events in log order after a cursor, at most `limit` of them. */
  listEvents(sessionId: string, afterId?: number, limit?: number): Promise<EventRow[]>;
  /**
   * How many events of any session have ids in (afterId, upToId]: ids are shared by every session,
   * so a gap in one session's ids is a hole (a write not committed yet) only if no session holds them.
   */
  countEventsInRange(afterId: number, upToId: number): Promise<number>;

  /** Holds or renews the session's partial-messages lease (`--include-partial-messages`) until then. */
  watchStream(sessionId: string, untilMs: number): Promise<void>;
  /** Whether a lease on the session's partial messages is held now. */
  streamWatched(sessionId: string): Promise<boolean>;
  /** Stores one piece of a model step's streamed text; idempotent on its position. */
  appendStreamDelta(sessionId: string, delta: StreamDelta): Promise<void>;
  /** Deletes the session's streamed pieces older than `keepMs`. */
  pruneStreamDeltas(sessionId: string, keepMs: number): Promise<void>;
  /** One step's streamed pieces after (attempt, seq), in order. */
  listStreamDeltas(
    sessionId: string,
    at: { execution: number; step: number },
    after: { attempt: number; seq: number },
  ): Promise<StreamDelta[]>;
  /** Stores an image given with `--image`; the first message names it by the returned id. */
  storeImage(sessionId: string, image: { mediaType: string; data: Uint8Array }): Promise<StoredImageRef>;
  /** The stored images with these ids (those still stored). */
  readImages(ids: number[]): Promise<StoredImage[]>;

  /** Writes a full tool output to the spool under a key (the tool-call id); idempotent. */
  writeSpool(sessionId: string, key: string, toolName: string, content: string): Promise<{ spoolId: number }>;
  /** Reads `limit` bytes from `offset` of a spooled output of this session; null when there is none. */
  readSpool(sessionId: string, spoolId: number, offset: number, limit: number): Promise<SpoolPage | null>;

  /**
   * Stores a tool's result in one transaction: spool row, tool event (with the facts) and result
   * message. Idempotent by the message key: a second call returns the first call's result.
   */
  recordToolResult(record: ToolResultRecord): Promise<RecordedToolResult>;

  /**
   * Stores what the tool host gathered for one execution; when a row for (session, execution)
   * exists (a retried activity), nothing is written and the stored data is returned.
   */
  saveWorkspaceContext(
    sessionId: string,
    execution: number,
    data: unknown,
  ): Promise<{ data: unknown; created: boolean }>;
  /**
   * The newest workspace context of a session (its highest execution), or null. A step passes its
   * execution: that execution's row never changes, so once read it may come from memory.
   */
  latestWorkspaceContext(
    sessionId: string,
    execution?: number,
  ): Promise<{ execution: number; data: unknown } | null>;

  saveCheckpoint(sessionId: string, goalState: unknown, tasks: unknown): Promise<void>;
  latestCheckpoint(sessionId: string): Promise<CheckpointRow | null>;

  close(): Promise<void>;

  /** The random id this store was given when it was created (32 hex characters); never changes. */
  storeId(): Promise<string>;

  /** Sets the store-wide daily money cap (store/daily-budget.ts), or null to turn it off. */
  setDailyCap(capUsd: number | null): Promise<void>;
  /** The daily cap, or null when none is set. */
  dailyCap(): Promise<number | null>;
  /** Reserves a model call's worst case against today's cap, atomically over every worker. */
  reserveDaily(sessionId: string, model: string, reservationUsd: number): Promise<DailyReservation>;
  /** Settles a daily reservation with the call's reported cost. */
  settleDaily(id: string, costUsd: number): Promise<void>;
  /** Releases a daily reservation: the calls made under it recorded their own cost (store/paid-calls.ts). */
  releaseDaily(id: string): Promise<void>;
  /** Records a paid call in the daily ledger once under its key; false when it was recorded before. */
  recordPaidCall(call: PaidCall): Promise<boolean>;
  /** Takes back a billed attempt whose answer became the step's answer after all. */
  voidPaidAttempt(sessionId: string, key: string): Promise<void>;
  /** A session's paid calls whose key starts with `keyPrefix`, oldest first. */
  paidCallsUnder(sessionId: string, keyPrefix: string): Promise<BilledAttemptRecord[]>;
  /** Today's cap, spend and reservations per goal and model. */
  dailyBudgetView(): Promise<DailyBudgetView>;
  /** Sessions whose id starts with `prefix`, newest first, at most `limit` (to resolve a short id). */
  findSessionsByPrefix(prefix: string, limit: number): Promise<SessionRow[]>;
  /** Sessions a short id (core/session-ids.ts, of any length) names, newest first, at most `limit`. */
  findSessionsByShortId(shortId: string, limit: number): Promise<SessionRow[]>;
  /** Ids of the store that end like any of `ids` (their shortest short id): what a short id is told apart from. */
  sessionIdsSharingEnds(ids: string[]): Promise<string[]>;
  /** Sessions named `name` (with /rename), newest first, at most `limit`. */
  findSessionsByName(name: string, limit: number): Promise<SessionRow[]>;
  /** The newest session of a project (by project hash), or null. */
  latestSessionOfProject(projectHash: string): Promise<SessionRow | null>;
}
