import { ApplicationFailure } from '@temporalio/common';
import type { GoalState } from '../core/goal';
import type { LedgerEntry } from '../core/ledger';
import { ledgerEntryFor } from '../core/ledger-entry';
import { type TranscriptEntry, textOf, toolCallsOf, userText } from '../core/messages';
import type { TaskGraph } from '../core/task-graph-types';
import { projectHash } from '../store/session-id';
import type { SessionStore } from '../store/types';
import { firstMessageText } from './prompt';
import type {
  AppendMessageInput,
  LoadCheckpointResult,
  OpenSessionInput,
  OpenSessionResult,
  RecordEventInput,
  SaveCheckpointInput,
} from './types';

/** Creates the session-store activities. */
export function createSessionActivities(store: SessionStore) {
  return {
    /** Creates the session row and stores the first message (objective and environment snapshot). */
    async openSession(input: OpenSessionInput): Promise<OpenSessionResult> {
      const { goal } = input;
      await store.createSession({
        id: goal.sessionId,
        projectDir: goal.workspace,
        projectHash: projectHash(goal.workspace),
        objective: goal.objective,
        model: goal.model,
        workflowId: input.workflowId,
      });
      const existing = await store.getMessageByKey(goal.sessionId, 'initial');
      const message = existing?.message ?? userText(await firstMessageText(goal, new Date()));
      const { seq } = existing ?? (await store.appendMessage(goal.sessionId, 'initial', message));
      await store.appendEvent(goal.sessionId, 'session-opened', { workflowId: input.workflowId }, 'opened');
      return { first: ledgerEntryFor(seq, 'initial', message) };
    },

    /** Stores a message the workflow wrote itself; idempotent on its key. */
    async appendMessage(input: AppendMessageInput): Promise<{ seq: number; entry: LedgerEntry }> {
      const { seq } = await store.appendMessage(input.sessionId, input.key, input.message);
      // goalrun's notices (compaction, failure budget) are events too, for `goalrun` and dashboards.
      if (input.key.startsWith('notice:')) {
        await store.appendEvent(input.sessionId, 'notice', { text: textOf(input.message) }, input.key);
      }
      return { seq, entry: ledgerEntryFor(seq, input.key, input.message) };
    },

    /** Saves a checkpoint of the control state and mirrors status and counters on the session row. */
    async saveCheckpoint(input: SaveCheckpointInput): Promise<void> {
      const goalState = { ...input.state, keptProgress: input.keptProgress ?? null };
      await store.saveCheckpoint(input.sessionId, goalState, input.tasks);
      await store.updateSession(input.sessionId, {
        status: input.state.status,
        reason: input.state.reason,
        goalState,
      });
      if (input.event)
        await store.appendEvent(input.sessionId, input.event.kind, input.event.data, input.event.key);
      if (input.keptProgress) {
        await store.appendEvent(input.sessionId, 'kept-progress', { summary: input.keptProgress });
      }
    },

    /** Loads what a resumed execution starts from: the last checkpoint and a ledger rebuilt from the transcript. */
    async loadCheckpoint(sessionId: string): Promise<LoadCheckpointResult> {
      const checkpoint = await store.latestCheckpoint(sessionId);
      if (!checkpoint) {
        throw ApplicationFailure.create({
          message: `session ${sessionId} has no checkpoint to resume from`,
          type: 'NoCheckpoint',
          nonRetryable: true,
        });
      }
      const saved = checkpoint.goalState as Omit<GoalState, 'ledger'> & { keptProgress?: string | null };
      const { keptProgress, ...rest } = saved;
      const transcript = await store.listMessages(sessionId);
      const answered = new Set<string>();
      for (const entry of transcript) {
        if (entry.message.role === 'tool')
          for (const part of entry.message.content) answered.add(part.toolCallId);
      }
      const unansweredToolCalls = transcript
        .flatMap((entry) => toolCallsOf(entry.message))
        .filter((call) => !answered.has(call.toolCallId))
        .map((call) => ({ toolCallId: call.toolCallId, toolName: call.toolName }));
      return {
        state: {
          ...rest,
          tasks: rest.tasks ?? (checkpoint.tasks as TaskGraph | null) ?? [],
          ledger: transcript.map(ledgerEntryOf),
        },
        tasks: checkpoint.tasks,
        keptProgress: keptProgress ?? null,
        unansweredToolCalls,
      };
    },

    /** Appends an event (notices, traces). */
    async recordEvent(input: RecordEventInput): Promise<void> {
      await store.appendEvent(input.sessionId, input.kind, input.data, input.key);
    },
  };
}

/** The ledger entry of a stored message. */
function ledgerEntryOf(entry: TranscriptEntry): LedgerEntry {
  return ledgerEntryFor(entry.seq, entry.key, entry.message);
}
