/**
 * The session-store activities the workflow calls itself: opening a session, storing the messages it
 * writes, saving its state, and preparing a resumed execution. They are short, keyed and idempotent,
 * so the workflow runs them as local activities.
 */
import { ApplicationFailure } from '@temporalio/common';
import { contextEntries } from '../core/context-plan';
import { ConfigError, FailureType } from '../core/errors';
import { EVENT_KINDS } from '../core/event-kinds';
import type { InitData } from '../core/event-log';
import { environmentLines, type WorkspaceContextData } from '../core/extensions/workspace-context';
import { FORK_ORIGIN_KEY, forkOriginOf } from '../core/fork-point';
import { type GoalDefinition, type GoalState, withLaterFields } from '../core/goal';
import type { LedgerEntry } from '../core/ledger';
import { ledgerEntryFor } from '../core/ledger-entry';
import { type StoredMessage, type TranscriptEntry, toolCallsOf, userText } from '../core/messages';
import { modelUnderCapRefusal } from '../core/spend-cap';
import { executionOfKey, FIRST_MESSAGE_KEY, KEY_PREFIX, SESSION_OPENED_EVENT_KEY } from '../core/store-keys';
import { addRequestUsage } from '../core/usage';
import { projectHash } from '../store/session-id';
import { SessionNameTaken } from '../store/session-names';
import type { SessionStore } from '../store/types';
import { recordContextNotices } from './extensions/extension-activities';
import { resolveModelBudget } from './model-budget';
import { homeOfProcess, unpricedReason } from './models/catalog';
import { firstMessageText, firstMessageWithEnvironment } from './prompt';
import { checkProviderConfig, normalizeModelSpec } from './providers/spec';
import type { ProviderEnv } from './providers/types';
import type {
  AppendMessageInput,
  OpenSessionInput,
  OpenSessionResult,
  PrepareResumeResult,
  RecordEventInput,
  SaveStateInput,
} from './types';

/** Failure type of a resume that finds no saved state. */
export const NO_SAVED_STATE = 'NoSavedState';

/** Creates the session-store activities. */
export function createSessionActivities(store: SessionStore, env: ProviderEnv = {}) {
  return {
    /** Creates the session row, stores the first message (objective and environment snapshot) and the initial state. */
    async openSession(input: OpenSessionInput): Promise<OpenSessionResult> {
      const { goal } = input;
      // A goal in a worktree of its own belongs to the project it was started in.
      const project = goal.worktree?.project ?? goal.workspace;
      await store.createSession({
        id: goal.sessionId,
        projectDir: project,
        projectHash: projectHash(project),
        objective: goal.objective,
        model: goal.model,
        workflowId: input.workflowId,
      });
      const existing = await store.getMessageByKey(goal.sessionId, FIRST_MESSAGE_KEY);
      const context = input.workspaceContext ? await workspaceContextOf(store, goal.sessionId) : undefined;
      const message =
        existing?.message ??
        withImages(userText(await firstMessage(goal, input.workspaceContext, context)), goal);
      const { seq } =
        existing ??
        (await store.appendMessage(goal.sessionId, FIRST_MESSAGE_KEY, message, {
          state: input.state,
          event: {
            kind: EVENT_KINDS.sessionOpened,
            data: initData(goal, input.workflowId),
            key: SESSION_OPENED_EVENT_KEY,
          },
        }));
      // After the first message and its session-opened event, so a stream still starts with init.
      if (context) await recordContextNotices(store, goal.sessionId, context);
      // Read-only, so a retried open answers the same.
      const [budget, dailyCapUsd] = await Promise.all([
        input.budget ? resolveModelBudget(env, input.budget) : undefined,
        input.dailyCap ? store.dailyCap() : undefined,
      ]);
      return {
        first: ledgerEntryFor(seq, FIRST_MESSAGE_KEY, message),
        ...(budget ? { budget } : {}),
        ...(dailyCapUsd !== undefined ? { dailyCapUsd } : {}),
      };
    },

    /** Stores a message the workflow wrote itself, with the state that accounts for it; idempotent on its key. */
    async appendMessage(input: AppendMessageInput): Promise<{ seq: number; entry: LedgerEntry }> {
      const { seq } = await store.appendMessage(input.sessionId, input.key, input.message, {
        meta: input.meta,
        state: input.state,
        event: input.event,
      });
      return { seq, entry: ledgerEntryFor(seq, input.key, input.message) };
    },

    /** Saves a change to the goal state (a full write also keeps a checkpoint row). */
    async saveState(input: SaveStateInput): Promise<void> {
      await store.writeGoalState(input.sessionId, input.state, input.event);
    },

    /** Gives the session a name (/rename). */
    async renameSession(input: { sessionId: string; name: string }): Promise<void> {
      try {
        await store.renameSession(input.sessionId, input.name);
      } catch (err) {
        // Names are unique per project: a taken name is the user's to change, not a retry's.
        if (!(err instanceof SessionNameTaken)) throw err;
        throw ApplicationFailure.create({
          message: err.message,
          type: FailureType.ConfigError,
          nonRetryable: true,
        });
      }
    },

    /**
     * Checks that this worker can call a model (/model): the specifier, its key, its script file, and
     * under a money cap its prices (a card from the package or `$GOALRUN_HOME/cards`).
     */
    async checkModel(input: {
      model: string;
      baseUrl?: string;
      apiKeyEnv?: string;
      maxCostUsd?: number;
    }): Promise<string> {
      try {
        const model = normalizeModelSpec(input.model);
        checkProviderConfig(model, env, input.baseUrl, input.apiKeyEnv);
        if (input.maxCostUsd !== undefined) {
          const unpriced = unpricedReason(model, homeOfProcess());
          if (unpriced) throw new ConfigError(modelUnderCapRefusal(unpriced, input.maxCostUsd));
        }
        return model;
      } catch (err) {
        const message = err instanceof ConfigError ? err.message : (err as Error).message;
        throw ApplicationFailure.create({ message, type: FailureType.ConfigError, nonRetryable: true });
      }
    },

    /**
     * What a resumed execution starts from: the saved state with its counters brought up to date with
     * the transcript (a run killed from outside may have saved its state a step before its last
     * answer), the ledger of what the context plan shows, the unanswered tool calls, and an execution
     * number no earlier execution has used.
     */
    async prepareResume(sessionId: string): Promise<PrepareResumeResult> {
      const row = await store.getSession(sessionId);
      const saved = row?.goalState as (Partial<GoalState> & SavedExtras) | null | undefined;
      if (!saved?.goal) {
        throw ApplicationFailure.create({
          message: `session ${sessionId} has no saved state to resume from`,
          type: NO_SAVED_STATE,
          nonRetryable: true,
        });
      }
      // A fork's origin is said once, by the CLI, at its first resume; the state keeps it no longer.
      const {
        keptProgress,
        checkpointSeq,
        [FORK_ORIGIN_KEY]: _origin,
        ...rest
      } = saved as typeof saved & {
        [FORK_ORIGIN_KEY]?: unknown;
      };
      const fork = forkOriginOf(saved, row ?? undefined);
      const transcript = await store.listMessages(sessionId);
      const recovered = stepsAfter(transcript, checkpointSeq);
      let usage = rest.usage;
      if (usage)
        for (const step of recovered) if (step.meta?.usage) usage = addRequestUsage(usage, step.meta.usage);
      const state = withLaterFields({
        ...(rest as GoalState),
        steps: (rest.steps ?? 0) + recovered.length,
        ...(usage ? { usage } : {}),
        ledger: [],
      });
      const ledger = transcript.map((entry) =>
        ledgerEntryFor(entry.seq, entry.key, entry.message, entry.meta?.tool),
      );
      const plan = state.compaction?.plan;
      return {
        state: {
          ...state,
          // The transcript holds every message; the ledger is what the context plan shows.
          ledger: plan ? contextEntries(ledger, plan).sort((a, b) => a.seq - b.seq) : ledger,
        },
        keptProgress: keptProgress ?? null,
        execution: nextExecution(transcript, rest.executions ?? 1),
        unansweredToolCalls: unansweredCalls(transcript),
        // A fork's steps after its saved state are the parent's, copied, not steps a run failed to save.
        stepsRecovered: fork ? 0 : recovered.length,
      };
    },

    /** Appends an event (notices, traces, decisions). */
    async recordEvent(input: RecordEventInput): Promise<void> {
      await store.appendEvent(input.sessionId, input.kind, input.data, input.key);
    },
  };
}

/**
 * The first message's text: with a workspace context, from the snapshot the tool host took; without
 * one (goals started before it), by running `git status` here, as those goals always did.
 */
/** The first message with the goal's `--image` images after its text (references; the bytes stay in the store). */
function withImages(message: StoredMessage, goal: GoalDefinition): StoredMessage {
  if (message.role !== 'user' || !goal.images?.length) return message;
  return { role: 'user', content: [...message.content, ...goal.images] };
}

async function firstMessage(
  goal: GoalDefinition,
  workspaceContext: OpenSessionInput['workspaceContext'],
  data: WorkspaceContextData | undefined,
): Promise<string> {
  if (!workspaceContext) return firstMessageText(goal, new Date());
  if (!data)
    return firstMessageWithEnvironment(goal, 'Environment: unknown (the tool host took no snapshot)');
  return firstMessageWithEnvironment(goal, environmentLines(data.environment));
}

async function workspaceContextOf(
  store: SessionStore,
  sessionId: string,
): Promise<WorkspaceContextData | undefined> {
  return (await store.latestWorkspaceContext(sessionId))?.data as WorkspaceContextData | undefined;
}

/** What the init event of a stream says about a goal. */
export function initData(goal: GoalDefinition, workflowId: string): InitData {
  return {
    workflowId,
    model: goal.model,
    workspace: goal.workspace,
    objective: goal.objective,
    limits: {
      maxSteps: goal.limits.maxSteps,
      maxIterations: goal.limits.maxIterations,
      maxMinutes: goal.limits.maxMinutes,
    },
  };
}

/** What the workflow saves beside the GoalState fields. */
interface SavedExtras {
  keptProgress?: string | null;
  /** The last transcript seq the saved state accounts for. */
  checkpointSeq?: number;
}

/** Assistant messages (model steps) stored after the saved state was written. */
function stepsAfter(transcript: TranscriptEntry[], checkpointSeq: number | undefined): TranscriptEntry[] {
  if (checkpointSeq === undefined) return [];
  return transcript.filter(
    (entry) => entry.seq > checkpointSeq && entry.key.startsWith(KEY_PREFIX.assistant),
  );
}

/** One more than the highest execution number in the saved state or in any stored key. */
function nextExecution(transcript: TranscriptEntry[], savedExecutions: number): number {
  const highest = transcript.reduce(
    (max, entry) => Math.max(max, executionOfKey(entry.key)),
    savedExecutions,
  );
  return highest + 1;
}

/** Tool calls of the transcript that have no result. */
function unansweredCalls(transcript: TranscriptEntry[]): Array<{ toolCallId: string; toolName: string }> {
  const answered = new Set<string>();
  for (const entry of transcript) {
    if (entry.message.role === 'tool')
      for (const part of entry.message.content) answered.add(part.toolCallId);
  }
  return transcript
    .flatMap((entry) => toolCallsOf(entry.message))
    .filter((call) => !answered.has(call.toolCallId))
    .map((call) => ({ toolCallId: call.toolCallId, toolName: call.toolName }));
}
