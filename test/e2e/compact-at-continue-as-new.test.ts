/**
 * Issue 9 item 4: `compact` updates that wait in the queue when continue-as-new is suggested are run
 * before the run continues as new (or the goal would wait forever for its handlers to finish).
 *
 * The moment is made certain, not left to chance: while an auto-compaction's summarizer call is held
 * open, a burst of `goalrun compact` requests is sent and accepted. Their acceptance alone adds more
 * history events than the dev server's continue-as-new threshold, so when the auto-compaction returns,
 * the loop finds continue-as-new suggested with every request still queued: only the drain before
 * continue-as-new can answer them. The history of that run shows it: the requests accepted during the
 * summarizer call, all answered after it, no model step between, and the run ends in ContinueAsNew.
 * Then compactions are requested without a pause while the goal runs through more runs.
 */
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { compactionModel } from '../support/compaction-model';
import { goalTestEnv } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { startTestTemporalServer, type TestTemporalServer } from '../support/temporal-server';

const STEPS = 24;
/** History events after which the dev server suggests continue-as-new. */
const SUGGEST_AFTER_EVENTS = 30;
/**
 * Compact requests of the burst. Each accepted update adds four events (its workflow task's three and
 * the acceptance), so the burst alone takes the run past SUGGEST_AFTER_EVENTS; it stays under the
 * server's limit of 10 updates in flight per workflow.
 */
const BURST = 8;

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The stage a `compact --json` printed, or undefined when stdout is not its JSON. */
function stageOf(stdout: string): string | undefined {
  try {
    return (JSON.parse(stdout) as { stage?: string }).stage;
  } catch {
    return undefined;
  }
}

describe('compact at continue-as-new', () => {
  let temporalServer: TestTemporalServer;
  let server: OpenAITestServer;
  beforeAll(async () => {
    temporalServer = await startTestTemporalServer({
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': SUGGEST_AFTER_EVENTS },
    });
    server = await startOpenAITestServer();
  });
  afterAll(async () => {
    await server?.close();
    await temporalServer?.stop();
  });

  it('runs the compactions queued when continue-as-new is suggested, so nothing hangs', async () => {
    const t = goalTestEnv('compact-can', { TEMPORAL_ADDRESS: temporalServer.address });
    const client = new Client({ connection: await Connection.connect({ address: temporalServer.address }) });
    // Medium outputs (not spooled): pruning cannot make room, so the auto-compaction calls the summarizer.
    const model = compactionModel({
      main: (n) =>
        n >= STEPS
          ? { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] }
          : {
              delayMs: 150,
              toolCalls: [
                {
                  name: 'bash',
                  args: { command: `seq 1 45 | sed 's/^/FACT-${n}: step ${n} output line number /'` },
                },
              ],
            },
    });
    let sessionId = '';
    let workflowId = '';
    let burst: Promise<CliResult[]> | null = null;
    const acceptedUpdates = async () =>
      ((await client.workflow.getHandle(workflowId).fetchHistory()).events ?? []).filter(
        (event) => event.workflowExecutionUpdateAcceptedEventAttributes,
      ).length;
    server.setFallback(async (body) => {
      const summary = !body.tools || body.tools.length === 0;
      if (summary && !burst) {
        // The first summarizer call is an auto-compaction's (no compact was requested yet): hold it
        // open until the whole burst is queued in the workflow.
        burst = Promise.all(
          Array.from({ length: BURST }, () => runCli(['compact', sessionId, '--json'], t.env, 240_000)),
        );
        await waitFor(
          'the burst of compact requests to be accepted',
          async () => (await acceptedUpdates()) >= BURST,
          120_000,
          200,
        );
      }
      return model.fallback(body);
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const started = await startGoal(t, server, 'count with compactions', ['--context-window', '12000']);
      ({ sessionId, workflowId } = started);
      const firstRunId: string = started.runId;

      // After the burst, compactions are requested without a pause until the goal ends.
      let running = true;
      const answered: number[] = [];
      const unexpected: string[] = [];
      const flood = (async () => {
        while (running && !burst) await new Promise((resolve) => setTimeout(resolve, 200));
        await burst;
        while (running) {
          const result = await runCli(['compact', sessionId, '--json'], t.env, 120_000);
          // Back to back, a compaction may find too little new context to shrink: it is discarded and
          // the command says so with exit 1. That is an answer too; anything else is not.
          const discarded = result.code === 1 && stageOf(result.stdout) === 'discarded';
          answered.push(discarded ? 0 : (result.code ?? -1));
          if (result.code !== 0 && result.code !== 2 && !discarded) {
            unexpected.push(`${result.stdout.trim()} ${result.stderr.trim()}`);
          }
        }
      })();
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 150_000);
      running = false;
      await flood;
      expect(watched.code, watched.stderr).toBe(0);
      expect(JSON.parse(watched.stdout)).toMatchObject({ status: 'completed', steps: STEPS });

      // Every request of the burst was answered.
      const burstResults = await (burst as Promise<CliResult[]> | null);
      expect(burstResults).toHaveLength(BURST);
      for (const result of burstResults ?? []) expect(result.code, result.stderr).toBe(0);
      // The flood's were too (the last one may find the goal ended: exit 2; a discarded one counts as 0).
      expect(
        answered.every((code) => code === 0 || code === 2),
        `exit codes ${answered.join(',')}; unexpected: ${unexpected.join(' | ')}`,
      ).toBe(true);

      // The chain of runs, from the first one.
      const runs: HistoryEvent[][] = [];
      let runId: string | undefined = firstRunId;
      while (runId) {
        const events: HistoryEvent[] =
          (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
        runs.push(events);
        runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
      }
      expect(runs.length).toBeGreaterThanOrEqual(3);

      // The run of the burst: the deadlock path, taken.
      const burstRun = runs.find((events) =>
        events.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes),
      );
      expect(burstRun, 'a run with the burst accepted').toBeDefined();
      const events = burstRun ?? [];
      const indexesOf = (match: (event: HistoryEvent) => unknown) =>
        events.flatMap((event, index) => (match(event) ? [index] : []));
      const accepted = indexesOf((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
      const completed = indexesOf((e) => e.workflowExecutionUpdateCompletedEventAttributes);
      expect(accepted).toHaveLength(BURST);
      expect(
        accepted.map(
          (i) => events[i].workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name,
        ),
      ).toEqual(Array(BURST).fill('compact'));
      // The summarizer call held open while the burst was accepted: the auto-compaction's.
      const scheduledActivity = (e: HistoryEvent) =>
        e.activityTaskScheduledEventAttributes?.activityType?.name;
      const autoSummary = Math.max(
        ...indexesOf((e) => scheduledActivity(e) === 'summarize').filter((i) => i < accepted[0]),
      );
      const autoSummaryId = events[autoSummary].eventId?.toString();
      const autoSummaryDone = indexesOf(
        (e) => e.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === autoSummaryId,
      )[0];
      expect(
        accepted.every((i) => i > autoSummary && i < autoSummaryDone),
        `accepted at ${accepted.join(',')}; the auto summary ran from ${autoSummary} to ${autoSummaryDone}`,
      ).toBe(true);
      // All of them queued when the loop looked for continue-as-new, and answered after it: no model step
      // ran in between, so no step boundary did it; the run then continued as new.
      expect(completed).toHaveLength(BURST);
      expect(
        completed.every((i) => i > autoSummaryDone),
        `completed at ${completed.join(',')}; the auto summary was done at ${autoSummaryDone}`,
      ).toBe(true);
      expect(indexesOf((e) => scheduledActivity(e) === 'modelStep').filter((i) => i > autoSummary)).toEqual(
        [],
      );
      expect(events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
      expect(Math.max(...completed)).toBeLessThan(events.length - 1);
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
      await client.connection.close();
    }
  });
});
