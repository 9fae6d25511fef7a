/**
 * Issue 10: `goalrun worker --metrics-port` serves Prometheus metrics, goalrun's counters beside
 * the Temporal SDK's. A goal with tools, a task list and compactions runs against a local
 * OpenAI-compatible server; the scrape must account for every step, call, summary and token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { compactionModel, fillerCall } from '../support/compaction-model';
import { goalTestEnv } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { findFreePort } from '../support/temporal-server';

// A model with a card and prices, so cost moves; the window is cut so that compaction happens.
const MODEL = 'openai:gpt-4o-mini';
const STEPS = 40;

/** Prometheus text as `name{labels}` → value (labels as written). */
function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const match = /^(\S+?(?:\{.*\})?)\s+(\S+)$/.exec(line);
    if (match) values.set(match[1], Number(match[2]));
  }
  return values;
}

/** The sum of every series of `name` whose labels include all of `labels`. */
function total(metrics: Map<string, number>, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const [series, value] of metrics) {
    if (series !== name && !series.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([key, v]) => series.includes(`${key}="${v}"`))) sum += value;
  }
  return sum;
}

describe('worker metrics', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('counts steps, tool calls, compactions, summarizer tokens, tokens and cost, beside the SDK metrics', async () => {
    const t = goalTestEnv('metrics', { OPENAI_API_KEY: 'sk-metrics-test' });
    const model = compactionModel({
      main: (n) => {
        if (n === 1) return { toolCalls: [{ name: 'todo-write', args: { todos: [{ content: 'print' }] } }] };
        if (n === STEPS)
          return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };
        return { toolCalls: [fillerCall(`s${n}`, 40)] };
      },
    });
    server.setFallback(model.fallback);
    const port = await findFreePort();
    const worker = spawnCli(['worker', '--metrics-port', String(port)], t.env);
    try {
      const url = `http://127.0.0.1:${port}/metrics`;
      await waitFor('the metrics endpoint', () => worker.output().includes(`metrics on ${url}`), 60_000);
      const before = parseMetrics(await (await fetch(url)).text());
      expect(total(before, 'goalrun_model_steps_total')).toBe(0);

      const { sessionId } = await startGoal(t, server, 'print a lot', ['--context-window', '12000'], MODEL);
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 240_000);
      expect(watched.code, watched.stderr).toBe(0);
      const status = JSON.parse(watched.stdout);
      expect(status).toMatchObject({ status: 'completed', steps: STEPS });

      const response = await fetch(url);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      const metrics = parseMetrics(await response.text());
      const mains = model.seen.filter((request) => request.kind === 'main').length;
      const summaries = model.seen.filter((request) => request.kind === 'summary').length;
      expect(mains).toBe(STEPS);
      expect(summaries).toBeGreaterThanOrEqual(1);

      // goalrun's own counters.
      expect(total(metrics, 'goalrun_model_steps_total', { model: MODEL })).toBe(STEPS);
      expect(total(metrics, 'goalrun_tool_calls_total', { tool: 'todo-write' })).toBe(1);
      expect(total(metrics, 'goalrun_tool_calls_total', { tool: 'bash' })).toBe(STEPS - 2);
      expect(total(metrics, 'goalrun_tool_calls_total', { tool: 'finish' })).toBe(1);
      expect(total(metrics, 'goalrun_tool_runs_total', { tool: 'bash', outcome: 'ok' })).toBe(STEPS - 2);
      expect(total(metrics, 'goalrun_summarizer_calls_total', { model: MODEL, source: 'model' })).toBe(
        summaries,
      );
      expect(total(metrics, 'goalrun_compactions_total', { stage: 'summarized' })).toBe(summaries);
      // Every token the goal accounts for (its steps and its summaries) is in the counters.
      expect(total(metrics, 'goalrun_tokens_total', { model: MODEL, kind: 'input' })).toBe(
        status.usage.inputTokens,
      );
      expect(total(metrics, 'goalrun_tokens_total', { model: MODEL, kind: 'output' })).toBe(
        status.usage.outputTokens,
      );
      // Cost as the goal's own breakdown counts it (`stats`): steps and summaries at the card's prices.
      const stats = await runCli(['stats', sessionId, '--json'], t.env);
      expect(stats.code, stats.stderr).toBe(0);
      const breakdown = JSON.parse(stats.stdout).breakdown[MODEL];
      expect(breakdown.costUsd).toBeGreaterThan(0);
      expect(total(metrics, 'goalrun_cost_usd_total', { model: MODEL })).toBeCloseTo(breakdown.costUsd, 9);
      expect(total(metrics, 'goalrun_cost_usd_total', { model: MODEL, purpose: 'summary' })).toBeCloseTo(
        breakdown.summarizer.costUsd,
        9,
      );
      expect(total(metrics, 'goalrun_summarizer_tokens_total', { direction: 'input' })).toBe(
        breakdown.summarizer.inputTokens,
      );

      // The SDK's runtime metrics, served on the same endpoint.
      expect(
        total(metrics, 'temporal_activity_execution_latency_count', { activity_type: 'modelStep' }),
      ).toBe(STEPS);
      expect(total(metrics, 'temporal_workflow_completed', { workflow_type: 'goalWorkflow' })).toBe(1);
      expect(total(metrics, 'process_resident_memory_bytes')).toBeGreaterThan(0);
      // The cache holds this goal: it never replayed from its first event.
      expect(total(metrics, 'goalrun_workflow_cache_capacity')).toBeGreaterThanOrEqual(100);
      expect(metrics.get('goalrun_workflow_full_replays_total')).toBe(0);
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
