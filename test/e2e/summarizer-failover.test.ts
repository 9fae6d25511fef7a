/**
 * Issue 27 §3, the summarizer fails over too: a goal whose summarizer_model answers 529 overloaded
 * gets its summary from the goal's own model, priced on that model's card, with no failure counted
 * against the auto-compact budget.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
const STEPS = 5;

describe('summarizer failover', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer({
      fallback: (body) => {
        if (isSummaryRequest(body)) {
          if (body.model === 'summary-model') {
            return {
              status: 529,
              body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
            };
          }
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
  afterAll(async () => server?.close());

  it("hands the summary to the goal's model when the summarizer is overloaded", async () => {
    const t = goalTestEnv('summarizer-failover', { OPENAI_COMPATIBLE_API_KEY: 'sk-test' });
    writePricedModelCard(t.home);
    fs.writeFileSync(path.join(t.home, 'config.json'), JSON.stringify({ summarizer_model: SUMMARY_MODEL }));
    const summaries = (model: string) =>
      server.requests.filter((request) => isSummaryRequest(request.body) && request.body.model === model)
        .length;
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
      const compacted = expectJson(await runCli(['compact', sessionId, '--json'], t.env, 120_000));
      expect(compacted.stage).toBe('summarized');
      expect(summaries('summary-model')).toBe(1);
      expect(summaries('priced-model')).toBe(1);
      // The summary is priced on the goal's card: 200 output tokens at $10 per million.
      const stats = expectJson(await runCli(['stats', sessionId, '--json'], t.env));
      expect(stats.breakdown[PRICED_MODEL].summarizerRequests).toBe(1);
      expect(stats.breakdown[PRICED_MODEL].summarizer.costUsd).toBeCloseTo(0.002, 9);
      await runCli(['cancel', sessionId, '--wait'], t.env);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);
});
