/**
 * A goal whose tools run on the workflow's own queue gathers its workspace context in the workflow
 * task that opens it (patch gather-in-workflow-task): a gatherWorkspaceContext local activity before
 * openSession, no activity of that type and no workflow task of its own, and the first model step
 * scheduled by the first workflow task. The gathering is the same: the workspace's AGENTS.md reaches
 * the model. A `--role model` worker that runs the workflow task says it runs no tools, and the goal
 * asks with an activity instead. A goal with a foreground host (`run`) still gathers with an activity
 * on its host's queue.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { goalArgs, requestsOf, startGoal } from '../support/goal-steps';
import { fetchHistory, localActivities } from '../support/history';
import { type OpenAITestServer, promptText, startOpenAITestServer } from '../support/openai-test-server';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The event ids at which activities of a type were scheduled. */
function scheduled(events: HistoryEvent[], type: string): number[] {
  return events
    .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type)
    .map((e) => Number(e.eventId));
}

/** How many workflow tasks completed before an event. */
function tasksBefore(events: HistoryEvent[], eventId: number): number {
  return events.filter((e) => e.workflowTaskCompletedEventAttributes && Number(e.eventId) < eventId).length;
}

/** How long a step may take to be seen on a loaded machine (a worker's start, then the first step). */
const SEEN_WITHIN_MS = 240_000;

const finishTurn = { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };

describe('the workspace context of a goal whose tools run on its own queue', { timeout: 400_000 }, () => {
  const t = goalTestEnv('gather-in-task');
  let model: OpenAITestServer;
  let worker: ReturnType<typeof spawnCli>;

  beforeAll(async () => {
    model = await startOpenAITestServer({ fallback: () => finishTurn });
    worker = spawnCli(['worker'], t.env);
  });
  afterAll(async () => {
    if (worker) await killAndWait(worker, 'SIGTERM');
    await model?.close();
  });

  it('is gathered by a local activity in the first workflow task, and reaches the model', async () => {
    const rule = `gather-rule-${process.pid}`;
    fs.writeFileSync(path.join(t.workspace, 'AGENTS.md'), `Always say ${rule}.\n`);
    const objective = 'finish at once (gathered in the workflow task)';
    const started = await startGoal(t, model, objective);
    const watched = await runCli(['watch', started.sessionId, '--json'], t.env, SEEN_WITHIN_MS);
    expect(watched.code, watched.stdout + watched.stderr).toBe(0);
    expect(JSON.parse(watched.stdout)).toMatchObject({ status: 'completed', steps: 1 });

    const events = (await fetchHistory(t.temporalAddress, started.workflowId)).map(({ event }) => event);
    expect(scheduled(events, 'gatherWorkspaceContext')).toEqual([]);
    const [firstStep] = scheduled(events, 'modelStep');
    expect(tasksBefore(events, firstStep)).toBe(1);
    const opening = localActivities(events).filter((m) => m.eventId < firstStep);
    expect(opening.map((m) => m.type)).toEqual(['gatherWorkspaceContext', 'openSession']);
    expect(opening[0].result).toMatchObject({ instructionFiles: 1 });

    const [request] = requestsOf(model, objective);
    expect(promptText(request.body)).toContain(rule);
  });

  it('is asked of a tool host by an activity when a --role model worker runs the workflow task', async () => {
    const modelOnly = goalTestEnv('gather-model-role');
    const modelWorker = spawnCli(['worker', '--role', 'model'], modelOnly.env);
    try {
      const objective = 'finish at once (no tools where the workflow runs)';
      const started = await startGoal(modelOnly, model, objective);
      // Only this worker polls the goal's queue: it runs the first workflow task, and its local activity
      // says it runs no tools; the goal then schedules the activity, which a tool host would take.
      const events = await waitFor(
        'the gathering to be scheduled as an activity',
        async () => {
          const history = (await fetchHistory(t.temporalAddress, started.workflowId)).map(
            ({ event }) => event,
          );
          return scheduled(history, 'gatherWorkspaceContext').length > 0 ? history : undefined;
        },
        SEEN_WITHIN_MS,
      );
      const markers = events.filter(
        (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
      );
      expect(markers.length).toBeGreaterThan(0);
      const failure = markers[0].markerRecordedEventAttributes?.failure;
      expect(failure?.cause?.applicationFailureInfo?.type ?? failure?.applicationFailureInfo?.type).toBe(
        'NotAToolHost',
      );
      const [gathered] = scheduled(events, 'gatherWorkspaceContext');
      expect(Number(markers[0].eventId)).toBeLessThan(gathered);
      // No workflow task failed on the way (an unregistered local activity would fail them all).
      expect(events.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
      const cancelled = await runCli(['cancel', started.sessionId], modelOnly.env);
      expect(cancelled.code, cancelled.stderr).toBe(0);
    } finally {
      await killAndWait(modelWorker, 'SIGTERM');
    }
  });

  it('is gathered by an activity on the host queue of a goal run in the foreground', async () => {
    const foreground = goalTestEnv('gather-foreground');
    const objective = 'finish at once (gathered on the host)';
    const result = await runCli(
      goalArgs('run', objective, foreground, model, ['--json']),
      foreground.env,
      SEEN_WITHIN_MS,
    );
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status.status).toBe('completed');

    const events = (await fetchHistory(t.temporalAddress, status.workflowId)).map(({ event }) => event);
    const [gathered] = scheduled(events, 'gatherWorkspaceContext');
    expect(gathered).toBeGreaterThan(0);
    const task = events.find((e) => Number(e.eventId) === gathered)?.activityTaskScheduledEventAttributes;
    expect(task?.taskQueue?.name).not.toBe(foreground.taskQueue);
    expect(localActivities(events).map((m) => m.type)).not.toContain('gatherWorkspaceContext');
  });
});
