/**
 * The session store over PostgreSQL. The class is the SessionStore that callers hold; each group of
 * tables has its own module of queries that take the client (sessions.ts, transcript-reads.ts,
 * event-reads.ts, message-append.ts, ...), and the methods here only pass the client on.
 */
import type { SavedState } from '../core/fork-point';
import type { StoredMessage, TranscriptEntry } from '../core/messages';
import type { BilledAttemptRecord } from '../core/paid-calls';
import type { StateWrite } from '../core/state-write';
import { latestCheckpoint, saveCheckpoint } from './checkpoints';
import {
  type DailyBudgetView,
  type DailyReservation,
  dailyBudgetView,
  dailyCap,
  reserveDaily,
  setDailyCap,
  settleDaily,
} from './daily-budget';
import { countEventsInRange, getEventByKey, lastEventAt, lastEventId, listEvents } from './event-reads';
import { insertImage, readImages, type StoredImage, type StoredImageRef } from './images';
import { latestRequestTokens, type MemoryMatch, type MemoryQuery, searchMemory } from './memory-search';
import { appendMessage, writeGoalState } from './message-append';
import { insertEvent } from './message-writes';
import { type PaidCall, paidCallsUnder, recordPaidCall, releaseDaily, voidPaidAttempt } from './paid-calls';
import { cleanSession } from './session-clean';
import { checkpointStates, type ForkRecord, forkSession } from './session-fork';
import { type SessionLockAttempt, tryLockSession, unlockSession } from './session-locks';
import {
  claimSessionName,
  findSessionByName,
  listProjectSessions,
  type NameClaim,
  renameSession,
} from './session-names';
import {
  createSession,
  deleteSession,
  findSession,
  findSessionsByName,
  findSessionsByPrefix,
  findSessionsByShortId,
  getSession,
  latestSessionOfProject,
  listSessions,
  type SessionPatch,
  sessionIdsSharingEnds,
  updateSession,
} from './sessions';
import { readSpoolPage } from './spool-read';
import { writeSpool } from './spool-write';
import type { SqlClient } from './sql';
import { openStep } from './step-opening';
import {
  insertStreamDelta,
  listStreamDeltas,
  pruneStreamDeltas,
  type StreamDelta,
  streamWatched,
  watchStream,
} from './stream-deltas';
import { recordToolResult } from './tool-result-writes';
import {
  countMessages,
  existingMessageKeys,
  getMessageByKey,
  getMessagesByKeys,
  listMessages,
  listMessagesForContext,
} from './transcript-reads';
import type {
  CheckpointRow,
  EventRow,
  MessageWriteOptions,
  NewSession,
  RecordedToolResult,
  SessionRow,
  SessionStore,
  SpoolPage,
  StepOpening,
  StoreEvent,
  ToolResultRecord,
} from './types';
import { CachedWorkspaceContexts, type WorkspaceContextRow } from './workspace-context-cache';

/** Sessions that `listSessions` returns when the caller names no limit. */
export const DEFAULT_SESSION_LIST_LIMIT = 100;

/** The session store over PostgreSQL (a server of the user's, or the embedded one). */
export class SqlSessionStore implements SessionStore {
  private readonly contexts: CachedWorkspaceContexts;

  constructor(private readonly client: SqlClient) {
    this.contexts = new CachedWorkspaceContexts(client);
  }

  // Sessions (sessions.ts, session-names.ts, session-locks.ts)

  createSession(session: NewSession): Promise<void> {
    return createSession(this.client, session);
  }

  getSession(id: string): Promise<SessionRow | null> {
    return getSession(this.client, id);
  }

  findSession(idOrWorkflowId: string): Promise<SessionRow | null> {
    return findSession(this.client, idOrWorkflowId);
  }

  listSessions(limit = DEFAULT_SESSION_LIST_LIMIT): Promise<SessionRow[]> {
    return listSessions(this.client, limit);
  }

  updateSession(id: string, patch: SessionPatch): Promise<void> {
    return updateSession(this.client, id, patch);
  }

  deleteSession(id: string): Promise<void> {
    this.contexts.forget(id);
    return deleteSession(this.client, id);
  }

  findSessionsByPrefix(prefix: string, limit: number): Promise<SessionRow[]> {
    return findSessionsByPrefix(this.client, prefix, limit);
  }

  findSessionsByShortId(shortId: string, limit: number): Promise<SessionRow[]> {
    return findSessionsByShortId(this.client, shortId, limit);
  }

  sessionIdsSharingEnds(ids: string[]): Promise<string[]> {
    return sessionIdsSharingEnds(this.client, ids);
  }

  findSessionsByName(name: string, limit: number): Promise<SessionRow[]> {
    return findSessionsByName(this.client, name, limit);
  }

  latestSessionOfProject(projectHash: string): Promise<SessionRow | null> {
    return latestSessionOfProject(this.client, projectHash);
  }

  async renameSession(id: string, name: string): Promise<void> {
    await renameSession(this.client, id, name);
  }

  claimSessionName(
    session: NewSession & { name: string },
    lock: { operation: string; holder: string; ttlMs: number },
  ): Promise<NameClaim> {
    return claimSessionName(this.client, session, lock);
  }

  findSessionByName(projectHashes: string[], name: string): Promise<SessionRow | null> {
    return findSessionByName(this.client, projectHashes, name);
  }

  listProjectSessions(projectHashes: string[] | null, limit: number): Promise<SessionRow[]> {
    return listProjectSessions(this.client, projectHashes, limit);
  }

  tryLockSession(
    sessionId: string,
    operation: string,
    holder: string,
    ttlMs: number,
  ): Promise<SessionLockAttempt> {
    return tryLockSession(this.client, sessionId, operation, holder, ttlMs);
  }

  unlockSession(sessionId: string, holder: string): Promise<void> {
    return unlockSession(this.client, sessionId, holder);
  }

  // A session's life: clean, fork, checkpoints, workspace contexts

  cleanSession(id: string, cleanableStatuses: readonly string[]): Promise<boolean> {
    this.contexts.forget(id);
    return this.client.transaction((tx) => cleanSession(tx, id, cleanableStatuses));
  }

  forkSession(record: ForkRecord): Promise<number> {
    return this.client.transaction((tx) => forkSession(tx, record));
  }

  checkpointStates(sessionId: string): Promise<SavedState[]> {
    return checkpointStates(this.client, sessionId);
  }

  saveCheckpoint(sessionId: string, goalState: unknown, tasks: unknown): Promise<void> {
    return saveCheckpoint(this.client, sessionId, goalState, tasks);
  }

  latestCheckpoint(sessionId: string): Promise<CheckpointRow | null> {
    return latestCheckpoint(this.client, sessionId);
  }

  saveWorkspaceContext(
    sessionId: string,
    execution: number,
    data: unknown,
  ): Promise<{ data: unknown; created: boolean }> {
    return this.contexts.save(sessionId, execution, data);
  }

  latestWorkspaceContext(sessionId: string, execution?: number): Promise<WorkspaceContextRow | null> {
    return this.contexts.latest(sessionId, execution);
  }

  // Messages and goal state (message-append.ts, transcript-reads.ts, tool-result-writes.ts)

  appendMessage(
    sessionId: string,
    key: string,
    message: StoredMessage,
    options: MessageWriteOptions = {},
  ): Promise<{ seq: number; created: boolean }> {
    return appendMessage(this.client, sessionId, key, message, options);
  }

  writeGoalState(sessionId: string, write: StateWrite, event?: MessageWriteOptions['event']): Promise<void> {
    return writeGoalState(this.client, sessionId, write, event);
  }

  recordToolResult(record: ToolResultRecord): Promise<RecordedToolResult> {
    return recordToolResult(this.client, record);
  }

  existingMessageKeys(sessionId: string, keys: string[]): Promise<Set<string>> {
    return existingMessageKeys(this.client, sessionId, keys);
  }

  getMessageByKey(sessionId: string, key: string): Promise<TranscriptEntry | null> {
    return getMessageByKey(this.client, sessionId, key);
  }

  getMessagesByKeys(sessionId: string, keys: string[]): Promise<Map<string, TranscriptEntry>> {
    return getMessagesByKeys(this.client, sessionId, keys);
  }

  listMessages(sessionId: string, range?: { fromSeq?: number; toSeq?: number }): Promise<TranscriptEntry[]> {
    return listMessages(this.client, sessionId, range);
  }

  listMessagesForContext(
    sessionId: string,
    seqs: number[],
    fromSeq: number,
    toSeq: number,
  ): Promise<TranscriptEntry[]> {
    return listMessagesForContext(this.client, sessionId, seqs, fromSeq, toSeq);
  }

  countMessages(sessionId: string): Promise<number> {
    return countMessages(this.client, sessionId);
  }

  // Memory search and usage (memory-search.ts)

  searchMemory(query: MemoryQuery): Promise<MemoryMatch[]> {
    return searchMemory(this.client, query);
  }

  latestRequestTokens(sessionId: string): Promise<number | null> {
    return latestRequestTokens(this.client, sessionId);
  }

  // Events (event-reads.ts, message-writes.ts)

  // Partial messages and images (stream-deltas.ts, images.ts)

  watchStream(sessionId: string, untilMs: number): Promise<void> {
    return watchStream(this.client, sessionId, untilMs);
  }

  openStep(sessionId: string, answerKey: string, event: StoreEvent & { key: string }): Promise<StepOpening> {
    return openStep(this.client, sessionId, answerKey, event);
  }

  streamWatched(sessionId: string): Promise<boolean> {
    return streamWatched(this.client, sessionId);
  }

  appendStreamDelta(sessionId: string, delta: StreamDelta): Promise<void> {
    return insertStreamDelta(this.client, sessionId, delta);
  }

  pruneStreamDeltas(sessionId: string, keepMs: number): Promise<void> {
    return pruneStreamDeltas(this.client, sessionId, keepMs);
  }

  listStreamDeltas(
    sessionId: string,
    at: { execution: number; step: number },
    after: { attempt: number; seq: number },
  ): Promise<StreamDelta[]> {
    return listStreamDeltas(this.client, sessionId, at, after);
  }

  storeImage(sessionId: string, image: { mediaType: string; data: Uint8Array }): Promise<StoredImageRef> {
    return insertImage(this.client, sessionId, image);
  }

  readImages(ids: number[]): Promise<StoredImage[]> {
    return readImages(this.client, ids);
  }

  async appendEvent(sessionId: string, kind: string, data: unknown, key?: string): Promise<void> {
    await insertEvent(this.client, sessionId, { kind, data, key });
  }

  lastEventId(sessionId: string): Promise<number> {
    return lastEventId(this.client, sessionId);
  }

  getEventByKey(sessionId: string, key: string): Promise<EventRow | null> {
    return getEventByKey(this.client, sessionId, key);
  }

  lastEventAt(sessionId: string, kinds: string[]): Promise<Date | null> {
    return lastEventAt(this.client, sessionId, kinds);
  }

  listEvents(sessionId: string, afterId?: number, limit?: number): Promise<EventRow[]> {
    return listEvents(this.client, sessionId, afterId, limit);
  }

  countEventsInRange(afterId: number, upToId: number): Promise<number> {
    return countEventsInRange(this.client, afterId, upToId);
  }

  // Spool (spool-write.ts, spool-read.ts)

  writeSpool(
    sessionId: string,
    key: string,
    toolName: string,
    content: string,
  ): Promise<{ spoolId: number }> {
    return writeSpool(this.client, sessionId, key, toolName, content);
  }

  /** Pages cut at UTF-8 character boundaries (see spool-read.ts). */
  readSpool(sessionId: string, spoolId: number, offset: number, limit: number): Promise<SpoolPage | null> {
    return readSpoolPage(this.client, sessionId, spoolId, offset, limit);
  }

  // Daily budget (daily-budget.ts)

  setDailyCap(capUsd: number | null): Promise<void> {
    return setDailyCap(this.client, capUsd);
  }

  dailyCap(): Promise<number | null> {
    return dailyCap(this.client);
  }

  reserveDaily(sessionId: string, model: string, reservationUsd: number): Promise<DailyReservation> {
    return reserveDaily(this.client, sessionId, model, reservationUsd);
  }

  settleDaily(id: string, costUsd: number): Promise<void> {
    return settleDaily(this.client, id, costUsd);
  }

  releaseDaily(id: string): Promise<void> {
    return releaseDaily(this.client, id);
  }

  // Paid calls (paid-calls.ts)

  recordPaidCall(call: PaidCall): Promise<boolean> {
    return recordPaidCall(this.client, call);
  }

  voidPaidAttempt(sessionId: string, key: string): Promise<void> {
    return voidPaidAttempt(this.client, sessionId, key);
  }

  paidCallsUnder(sessionId: string, keyPrefix: string): Promise<BilledAttemptRecord[]> {
    return paidCallsUnder(this.client, sessionId, keyPrefix);
  }

  dailyBudgetView(): Promise<DailyBudgetView> {
    return dailyBudgetView(this.client);
  }

  // The store itself

  async storeId(): Promise<string> {
    const { rows } = await this.client.query<{ store_id: string }>('SELECT store_id FROM goalrun_store');
    if (rows.length === 0) throw new Error('the session store has no identity row (migration 2 did not run)');
    return rows[0].store_id;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
