/**
 * Issue 9 item 5: a run killed from outside (`temporal workflow terminate`) saved its state with the
 * answer of its last step but never the state after it, so the saved state is one step behind the
 * transcript. `prepareResume` rebuilds the counters from the transcript: the step stored after the saved
 * state is counted (steps and usage), its call is unanswered, and the next execution number is new.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionActivities } from '../../activities/session-activities';
import { DEFAULT_LIMITS, type GoalDefinition, initialGoalState } from '../../core/goal';
import type { MessageMeta, StoredMessage } from '../../core/messages';
import { storeKeys } from '../../core/store-keys';
import { addRequestUsage, EMPTY_USAGE, type RequestUsage } from '../../core/usage';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { createTempDir, createTestDatabase, type TestDatabase } from './test-databases';

const USAGE_1: RequestUsage = {
  inputTokens: 1_000,
  outputTokens: 50,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
};
const USAGE_2: RequestUsage = {
  inputTokens: 1_400,
  outputTokens: 70,
  cacheReadTokens: 200,
  cacheWriteTokens: 0,
};

function assistantCalling(toolCallId: string, command: string): StoredMessage {
  return {
    role: 'assistant',
    content: [{ type: 'tool-call', toolCallId, toolName: 'bash', input: { command } }],
  };
}

function resultOf(toolCallId: string, text: string): StoredMessage {
  return {
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId, toolName: 'bash', output: { type: 'text', value: text } }],
  };
}

const metaOf = (usage: RequestUsage): MessageMeta => ({
  usage,
  finishReason: 'tool-calls',
  model: 'scripted:x',
});

describe('prepareResume after a run killed from outside', () => {
  let db: TestDatabase;
  let client: SqlClient;
  let store: SqlSessionStore;
  const workspace = createTempDir('goalrun-resume-recovery');

  beforeAll(async () => {
    db = await createTestDatabase();
    client = createPgClient(db.url);
    await migrate(client);
    store = new SqlSessionStore(client);
  });
  afterAll(async () => {
    await client?.close();
    await db?.drop();
    workspace.remove();
  });

  /**
   * A session as execution 1 leaves it: step 1 and its result, then step 2's answer stored with the
   * state as of step 2's start. With `killedAfterStep2`, the run died there (its call unanswered, no
   * later write); otherwise step 2's result and the state after it were stored too.
   */
  async function sessionOfExecution1(sessionId: string, killedAfterStep2: boolean) {
    const goal: GoalDefinition = {
      sessionId,
      objective: 'count the files',
      workspace: workspace.dir,
      model: 'scripted:x',
      limits: DEFAULT_LIMITS,
    };
    const activities = createSessionActivities(store);
    const initial = initialGoalState(goal);
    const { first } = await activities.openSession({
      goal,
      workflowId: `wf-${sessionId}`,
      state: { set: { ...initial, checkpointSeq: 0 }, full: true },
    });
    // Each model step commits its answer with the state as of the step's start (steps taken before it).
    await store.appendMessage(sessionId, storeKeys.assistant(1, 1), assistantCalling('call_1', 'ls'), {
      meta: metaOf(USAGE_1),
      state: { set: { steps: 0, checkpointSeq: first.seq } },
    });
    const result1 = await store.appendMessage(
      sessionId,
      storeKeys.toolResult('call_1'),
      resultOf('call_1', 'a b c'),
    );
    const afterStep1 = addRequestUsage(EMPTY_USAGE, USAGE_1);
    await store.appendMessage(sessionId, storeKeys.assistant(1, 2), assistantCalling('call_2', 'wc -l *'), {
      meta: metaOf(USAGE_2),
      state: { set: { steps: 1, usage: afterStep1, checkpointSeq: result1.seq } },
    });
    if (!killedAfterStep2) {
      const result2 = await store.appendMessage(
        sessionId,
        storeKeys.toolResult('call_2'),
        resultOf('call_2', '3'),
      );
      // The next write of the workflow (a checkpoint at iteration end) accounts for step 2.
      await store.writeGoalState(sessionId, {
        set: { steps: 2, usage: addRequestUsage(afterStep1, USAGE_2), checkpointSeq: result2.seq },
      });
    }
    return { activities, afterStep1 };
  }

  it('counts the step stored after the saved state, and its unanswered call', async () => {
    const sessionId = 'resume-recovery-ahead';
    const { activities, afterStep1 } = await sessionOfExecution1(sessionId, true);
    const saved = (await store.getSession(sessionId))?.goalState as { steps: number };
    // The premise: the saved state is one step behind the transcript.
    expect(saved.steps).toBe(1);

    const prepared = await activities.prepareResume(sessionId);
    expect(prepared.stepsRecovered).toBe(1);
    expect(prepared.state.steps).toBe(2);
    expect(prepared.state.usage).toEqual(addRequestUsage(afterStep1, USAGE_2));
    expect(prepared.state.usage.requests).toBe(2);
    expect(prepared.unansweredToolCalls).toEqual([{ toolCallId: 'call_2', toolName: 'bash' }]);
    // A new execution number: the resumed run's keys (step:3@2, …) cannot meet execution 1's rows.
    expect(prepared.execution).toBe(2);
    // The ledger holds every stored message, the recovered step's call among them.
    const transcript = await store.listMessages(sessionId);
    expect(prepared.state.ledger.map((entry) => entry.seq)).toEqual(transcript.map((entry) => entry.seq));
    expect(prepared.state.ledger.at(-1)).toMatchObject({ role: 'assistant', toolCallIds: ['call_2'] });
  });

  it('recovers nothing when the saved state accounts for every stored step', async () => {
    const sessionId = 'resume-recovery-even';
    const { activities, afterStep1 } = await sessionOfExecution1(sessionId, false);
    const prepared = await activities.prepareResume(sessionId);
    expect(prepared.stepsRecovered).toBe(0);
    expect(prepared.state.steps).toBe(2);
    expect(prepared.state.usage).toEqual(addRequestUsage(afterStep1, USAGE_2));
    expect(prepared.unansweredToolCalls).toEqual([]);
    expect(prepared.execution).toBe(2);
  });

  it('takes an execution number above any stored key, even one the saved state does not know', async () => {
    const sessionId = 'resume-recovery-later-execution';
    const { activities } = await sessionOfExecution1(sessionId, false);
    // Execution 2 stored a step and died before saving anything that says it ran.
    await store.appendMessage(sessionId, storeKeys.assistant(2, 3), assistantCalling('call_3', 'pwd'), {
      meta: metaOf(USAGE_1),
    });
    const prepared = await activities.prepareResume(sessionId);
    expect(prepared.execution).toBe(3);
    expect(prepared.stepsRecovered).toBe(1);
    expect(prepared.state.steps).toBe(3);
    expect(prepared.unansweredToolCalls).toEqual([{ toolCallId: 'call_3', toolName: 'bash' }]);
  });
});
