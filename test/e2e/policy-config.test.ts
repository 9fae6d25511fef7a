/** Compaction settings from the config file reach the goal; policy and stats report them. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';

describe('policy and stats', () => {
  it('show the configured threshold, failure budget and backup card, and the usage per model', async () => {
    // The backup is checked as the model is: its key must be there (issue 27 §3).
    const t = goalTestEnv('policy', { OPENAI_API_KEY: 'sk-test' });
    fs.writeFileSync(
      path.join(t.home, 'config.json'),
      JSON.stringify({
        auto_compact_threshold_pct: 70,
        auto_compact_max_failures: 5,
        backup_model: 'openai:gpt-4o-mini',
      }),
    );
    const model = scriptedModel(t.home, [
      {
        toolCalls: [{ name: 'bash', args: { command: 'echo hi' } }],
        usage: { input: 1200, output: 30, cacheRead: 1000 },
      },
      {
        toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'ok' } }],
        usage: { input: 1500, output: 20 },
      },
    ]);
    const run = await runCli(
      ['run', 'say hi', '--workspace', t.workspace, '--model', model, '--context-window', '50000', '--json'],
      t.env,
    );
    expect(run.code, run.stderr).toBe(0);
    const { sessionId } = JSON.parse(run.stdout);

    const policy = await runCli(['policy', sessionId, '--json'], t.env);
    expect(policy.code, policy.stderr).toBe(0);
    expect(JSON.parse(policy.stdout)).toMatchObject({
      windowTokens: 50_000,
      windowSource: 'provider-reported',
      thresholdPct: 70,
      autoCompact: 'on',
      failures: 0,
      maxFailures: 5,
      backup: { model: 'openai:gpt-4o-mini', windowTokens: 128_000 },
    });
    const text = await runCli(['policy', sessionId], t.env);
    expect(text.stdout).toMatch(/context window:\s+50000 tokens/);
    expect(text.stdout).toMatch(/failures:\s+0 \/ 5/);
    expect(text.stdout).toMatch(/backup card:\s+openai:gpt-4o-mini/);

    const stats = JSON.parse((await runCli(['stats', sessionId, '--json'], t.env)).stdout);
    expect(stats.usage).toMatchObject({
      inputTokens: 2700,
      outputTokens: 50,
      cacheReadTokens: 1000,
      requests: 2,
    });
    expect(stats.breakdown[model]).toMatchObject({ requests: 2, inputTokens: 2700, summarizerRequests: 0 });
    const human = await runCli(['stats', sessionId], t.env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(model);
  });
});
