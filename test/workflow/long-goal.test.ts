/**
 * Issue 4 acceptance 8 and 10: usage accounting across compactions, and a goal of several
 * hundred steps in a small window that runs through repeated auto-compaction and continue-as-new.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli } from '../support/cli';
import { compactionModel, compactionNotices, fillerCall, pairingProblems } from '../support/compaction-model';
import { goalTestEnv, testStore } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { fetchHistory } from '../support/history';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { startTestTemporalServer, type TestTemporalServer } from '../support/temporal-server';

const MODEL = 'openai-compatible:test-model';

describe('long goals', () => {
  let server: OpenAITestServer;
  let temporal: TestTemporalServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
    temporal = await startTestTemporalServer({
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 1000 },
    });
  });
  afterAll(async () => {
    await server?.close();
    await temporal?.stop();
  });

  it('run hundreds of steps through repeated compaction and continue-as-new, counting every request once', async () => {
    const t = goalTestEnv('long', { TEMPORAL_ADDRESS: temporal.address });
    const steps = 300;
    const summaryUsage = { prompt_tokens: 1500, completion_tokens: 300 };
    const model = compactionModel({
      main: (n) =>
        n === steps
          ? { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] }
          : { toolCalls: [fillerCall(`step ${n}`, 40)] },
      summary: () => undefined,
    });
    // Every request reports usage the test knows, so the accounting can be checked to the token.
    const mainInputs: number[] = [];
    const fallback: typeof model.fallback = (body) => {
      const answer = model.fallback(body) as object;
      if (!body.tools || body.tools.length === 0) return { ...answer, usage: summaryUsage };
      const prompt = Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
      mainInputs.push(prompt);
      return { ...answer, usage: { prompt_tokens: prompt, completion_tokens: 20 } };
    };
    server.setFallback(fallback);
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId, workflowId, runId } = await startGoal(t, server, 'a long goal', [
        '--context-window',
        '12000',
      ]);
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 600_000);
      expect(watched.code, watched.stderr).toBe(0);
      const final = JSON.parse(watched.stdout);
      expect(final).toMatchObject({ status: 'completed', steps });

      const mains = model.seen.filter((request) => request.kind === 'main');
      const summaries = model.seen.filter((request) => request.kind === 'summary');
      expect(mains).toHaveLength(steps);
      expect(summaries.length).toBeGreaterThanOrEqual(10);
      for (const request of mains) expect(pairingProblems(request.body)).toEqual([]);

      // Continue-as-new happened, more than once, and no run came near Temporal's limits.
      const firstRun = await fetchHistory(temporal.address, workflowId, runId);
      expect(firstRun.at(-1)!.event.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
      expect(firstRun.length).toBeLessThan(2_000);

      // Accounting: every main and summarizer request counted once, the summarizer share apart.
      const mainInput = mainInputs.reduce((sum, tokens) => sum + tokens, 0);
      const stats = JSON.parse((await runCli(['stats', sessionId, '--json'], t.env)).stdout);
      expect(stats.usage.requests).toBe(steps + summaries.length);
      expect(stats.usage.inputTokens).toBe(mainInput + summaries.length * summaryUsage.prompt_tokens);
      expect(stats.usage.outputTokens).toBe(steps * 20 + summaries.length * summaryUsage.completion_tokens);
      const perModel = stats.breakdown[MODEL];
      expect(perModel.requests).toBe(steps + summaries.length);
      expect(perModel.summarizerRequests).toBe(summaries.length);
      expect(perModel.summarizer.inputTokens).toBe(summaries.length * summaryUsage.prompt_tokens);
      expect(stats.compactions).toBe(summaries.length);

      // Occupancy is the largest single request since the last compaction, not a sum.
      expect(final.usage.contextTokens).toBeLessThan(12_000);
      expect(final.usage.totalTokens).toBe(stats.usage.inputTokens + stats.usage.outputTokens);

      const store = await testStore(t.databaseUrl);
      const messages = await store.listMessages(sessionId);
      await store.close();
      expect(new Set(messages.map((m) => m.key)).size).toBe(messages.length);
      // The gauge drops at every compaction.
      const notices = compactionNotices(messages);
      const tokens = (value: string, unit: string) => Number(value) * (unit === 'k' ? 1000 : 1);
      expect(notices.length).toBeGreaterThanOrEqual(10);
      for (const notice of notices) {
        const [, before, beforeUnit, after, afterUnit] =
          /compacted ([\d.]+)(k?) → ([\d.]+)(k?) tokens/.exec(notice) ?? [];
        expect(tokens(after, afterUnit)).toBeLessThan(tokens(before, beforeUnit));
      }
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  }, 480_000);
});
