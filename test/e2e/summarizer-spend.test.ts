/**
 * Issue 24 item 4, the summarizer's spend end to end over HTTP: a goal whose summarizer_model has a
 * card of its own (output at $100 per million, 500 tokens at most) pays for a summary at that card's
 * prices, not the goal model's ($10 per million); the summary is recorded in the daily ledger like any
 * call (here with no daily cap set), and with a daily cap that has no room for its worst case ($0.05)
 * the summarizer is not called at all. The test has a database of its own: a daily cap is store-wide.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../store/test-databases';
import { expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { summarizeLikeAModel } from '../support/compaction-model';
import { goalTestEnv } from '../support/goal-env';
import { startGoal, statusOf } from '../support/goal-steps';
import {
  isSummaryRequest,
  type OpenAITestServer,
  promptText,
  startOpenAITestServer,
} from '../support/openai-test-server';
import { PRICED_MODEL, writePricedModelCard } from '../support/priced-model';

const SUMMARY_MODEL = 'openai-compatible:summary-model';
const SUMMARY_CARD = {
  provider: 'openai-compatible',
  model: 'summary-model',
  advertisedContextTokens: 128_000,
  maxOutputTokens: 500,
  prices: { inputPerMTok: 0, outputPerMTok: 100, cacheReadPerMTok: 0, cacheWritePerMTok: 0 },
  source: 'test',
};
const STEPS = 5;

describe("the summarizer's spend", () => {
  let server: OpenAITestServer;
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    server = await startOpenAITestServer({
      fallback: (body) => {
        // A summary reports 200 output tokens: $0.02 on the summarizer's card, $0.002 on the goal's.
        if (isSummaryRequest(body)) {
          return {
            text: summarizeLikeAModel(promptText(body)),
            usage: { prompt_tokens: 900, completion_tokens: 200 },
          };
        }
        const step = (body.messages ?? []).filter((message) => message.role === 'assistant').length + 1;
        return {
          toolCalls: [{ name: 'bash', args: { command: `echo FACT-${step}: step ${step} ran` } }],
          usage: { prompt_tokens: 400, completion_tokens: 1_000 },
        };
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('is priced on its own card, recorded in the daily ledger, and held against the daily cap', async () => {
    const t = goalTestEnv('summarizer-spend', { OPENAI_API_KEY: 'sk-test', DATABASE_URL: database.url });
    writePricedModelCard(t.home);
    fs.mkdirSync(path.join(t.home, 'cards', 'openai-compatible'), { recursive: true });
    fs.writeFileSync(
      path.join(t.home, 'cards', 'openai-compatible', 'summary-model.json'),
      JSON.stringify(SUMMARY_CARD),
    );
    fs.writeFileSync(path.join(t.home, 'config.json'), JSON.stringify({ summarizer_model: SUMMARY_MODEL }));
    const summaries = () =>
      server.requests.filter((request) => request.body.model === 'summary-model').length;
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(
        t,
        server,
        'run five steps',
        ['--max-steps', String(STEPS)],
        PRICED_MODEL,
      );
      await waitFor(
        'the goal to wait at its step limit',
        async () => (await statusOf(t, sessionId)).status === 'limit_reached',
        180_000,
        500,
      );
      // Five steps of $0.01: a $0.06 daily cap leaves $0.01, less than a summary's worst case ($0.05).
      expect((await runCli(['budget', 'set', '--daily-usd', '0.06'], t.env)).code).toBe(0);
      const refused = expectJson(await runCli(['compact', sessionId, '--json'], t.env, 120_000));
      expect(refused.stage).toBe('none');
      expect(summaries()).toBe(0);

      expect((await runCli(['budget', 'set', '--daily-usd', 'off'], t.env)).code).toBe(0);
      const compacted = expectJson(await runCli(['compact', sessionId, '--json'], t.env, 120_000));
      expect(compacted.stage).toBe('summarized');
      expect(summaries()).toBe(1);

      const stats = expectJson(await runCli(['stats', sessionId, '--json'], t.env));
      const summarizer = stats.breakdown[SUMMARY_MODEL];
      expect(summarizer.summarizerRequests).toBe(1);
      expect(summarizer.summarizer.costUsd).toBeCloseTo(0.02, 9);
      expect((await statusOf(t, sessionId)).costUsd).toBeCloseTo(0.07, 9);

      // In the daily ledger with no cap set: the steps and the summary, each on its model's line.
      const budget = expectJson(await runCli(['budget', '--json'], t.env));
      expect(budget.capUsd).toBeNull();
      const lines = budget.lines.filter((line: { sessionId: string }) => line.sessionId === sessionId);
      const byModel = Object.fromEntries(lines.map((line: { model: string }) => [line.model, line]));
      expect(byModel[SUMMARY_MODEL]).toMatchObject({ calls: 1, reservedUsd: 0 });
      expect(byModel[SUMMARY_MODEL].spentUsd).toBeCloseTo(0.02, 9);
      expect(byModel[PRICED_MODEL]).toMatchObject({ calls: STEPS, reservedUsd: 0 });
      expect(budget.spentUsd).toBeCloseTo(0.07, 9);
      await runCli(['cancel', sessionId, '--wait'], t.env);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);
});
