/**
 * The answer of the `finish` that ends a goal is stored by the goal's last local activity, with the
 * goal-ended checkpoint (patch finish-answered-at-end): after the last model step the history holds
 * one local activity, not an appendMessage and then a saveState. The transcript still ends with that
 * answer, its tool event comes before the goal-ended event, and the last checkpoint says completed.
 */
import { describe, expect, it } from 'vitest';
import { storeKeys } from '../../core/store-keys';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { fetchHistory, localActivities } from '../support/history';

const TURNS = [
  { toolCalls: [{ name: 'bash', args: { command: 'echo one > one.txt' } }] },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'wrote one.txt' } }] },
];

describe('a goal that finishes', () => {
  it('stores the answer of its finish with the goal-ended checkpoint, in one local activity', {
    timeout: 180_000,
  }, async () => {
    const t = goalTestEnv('finish-at-end');
    const result = await runCli(
      ['run', 'write one', '--workspace', t.workspace, '--model', scriptedModel(t.home, TURNS), '--json'],
      t.env,
      120_000,
    );
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({ status: 'completed', steps: 2 });

    const events = (await fetchHistory(t.temporalAddress, status.workflowId)).map(({ event }) => event);
    const lastModelStep = Math.max(
      ...events
        .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelStep')
        .map((e) => Number(e.eventId)),
    );
    const afterLastStep = localActivities(events).filter((m) => m.eventId > lastModelStep);
    expect(afterLastStep.map((m) => m.type)).toEqual(['appendMessage']);

    const store = await testStore(t.databaseUrl);
    try {
      const messages = await store.listMessages(status.sessionId);
      const last = messages.at(-1)!;
      expect(last.key).toBe(storeKeys.toolResult('call_2_0'));
      expect(last.message).toMatchObject({
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'call_2_0', toolName: 'finish' }],
      });
      const kinds = (await store.listEvents(status.sessionId)).map((event) => ({
        kind: event.kind,
        call: (event.data as { toolCallId?: string }).toolCallId,
      }));
      const finishEvent = kinds.findIndex((e) => e.kind === 'tool' && e.call === 'call_2_0');
      const ended = kinds.findIndex((e) => e.kind === 'goal-ended');
      expect(finishEvent).toBeGreaterThanOrEqual(0);
      expect(ended).toBeGreaterThan(finishEvent);
      expect((await store.latestCheckpoint(status.sessionId))?.goalState).toMatchObject({
        status: 'completed',
        steps: 2,
      });
    } finally {
      await store.close();
    }
  });
});
