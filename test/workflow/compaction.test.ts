/**
 * Issue 4 acceptance over real HTTP: repeated auto-compaction keeps facts, tasks and pairing;
 * the failure budget pauses and a manual compact resets it; a provider overflow is recovered
 * by a forced compaction and exactly one retry.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageVersion } from '../../worker/build-info';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { compactionModel, compactionNotices, fillerCall, pairingProblems } from '../support/compaction-model';
import { goalTestEnv, testStore } from '../support/goal-env';
import { goalArgs, startGoal } from '../support/goal-steps';
import { historyJson, saveHistoryFixture } from '../support/history-fixtures';
import {
  type OpenAITestServer,
  openAIErrorResponse,
  startOpenAITestServer,
} from '../support/openai-test-server';

const CONSTRAINT = 'CONSTRAINT: keep the public API stable';

describe('compaction', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('keeps facts, tasks and tool pairing through five and more auto-compactions', async () => {
    const t = goalTestEnv('compact-long');
    const steps = 125;
    const model = compactionModel({
      main: (n) => {
        if (n === 1) {
          return {
            toolCalls: [
              {
                name: 'todo-write',
                args: {
                  todos: [{ content: 'Build the widget' }, { content: 'Test it', dependencies: ['task-1'] }],
                },
              },
              fillerCall('s1', 30),
            ],
          };
        }
        if (n === 3)
          return { text: 'DECISION-3: store widgets in SQLite', toolCalls: [fillerCall('s3', 30)] };
        if (n === 5) {
          return {
            toolCalls: [
              { name: 'file-write', args: { path: 'src/app.js', content: 'module.exports = 42;\n' } },
            ],
          };
        }
        if (n === 7)
          return {
            toolCalls: [{ name: 'bash', args: { command: 'echo "ERROR E4711: widget exploded"; exit 1' } }],
          };
        if (n === steps)
          return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };
        // Outputs under the spool threshold: pruning cannot help, so the summarizer runs.
        return { toolCalls: [fillerCall(`s${n}`, 40)] };
      },
    });
    server.setFallback(model.fallback);
    const result = await runCli(
      goalArgs('run', `build the widget; ${CONSTRAINT}`, t, server, ['--context-window', '12000', '--json']),
      t.env,
      240_000,
    );
    server.setFallback(undefined);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    // Says what else reached stdout if anything did: --json must print the status object alone.
    expect(() => JSON.parse(result.stdout), `stdout ends: ${result.stdout.slice(-400)}`).not.toThrow();
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({ status: 'completed', steps });

    const mains = model.seen.filter((request) => request.kind === 'main');
    const summaries = model.seen.filter((request) => request.kind === 'summary');
    expect(mains).toHaveLength(steps);

    expect(summaries.length).toBeGreaterThanOrEqual(5);
    for (const request of mains) {
      expect(pairingProblems(request.body)).toEqual([]);
      const text = JSON.stringify(request.body.messages);
      expect(text).toContain(CONSTRAINT);
    }
    // The last request, after every compaction: the facts are still in the context.
    const last = JSON.stringify(mains.at(-1)!.body.messages);
    expect(last).toContain('DECISION-3: store widgets in SQLite');
    expect(last).toContain('ERROR E4711: widget exploded');
    expect(last).toContain('src/app.js');
    // The task graph is in every request after it was written, unchanged by compaction: its last
    // message, after the transcript (the system prompt stays the same, for the prompt cache).
    for (const request of mains.slice(1)) {
      const tail = JSON.stringify(request.body.messages?.at(-1) ?? '');
      expect(tail).toContain('task-1 Build the widget');
      expect(tail).toContain('task-2 Test it');
      expect(String(request.body.messages?.[0]?.content ?? '')).not.toContain('task-1');
    }
    // Occupancy is the largest request since the last compaction; the context stayed bounded.
    const largest = Math.max(...mains.map((request) => request.chars));
    expect(largest).toBeLessThan(12000 * 4);

    const store = await testStore(t.databaseUrl);
    const messages = await store.listMessages(status.sessionId);
    await store.close();
    const notices = compactionNotices(messages);
    expect(notices.length).toBeGreaterThanOrEqual(5);
    expect(notices[0]).toMatch(/^\[goalrun\] compacted \d+(\.\d)?k? → \d+(\.\d)?k? tokens/);
    // Files modified in the summary equal those from the tool log.
    const lastSummary = messages.filter((m) => m.key.startsWith('summary:')).at(-1)!;
    const summaryText = (lastSummary.message.content[0] as { text: string }).text;
    expect(summaryText).toContain('## Files modified (from the tool log)');
    expect(summaryText).toContain('src/app.js');
    expect(summaryText).toContain('DECISION-3: store widgets in SQLite');
  });

  it('pauses auto-compact after three summarizer failures; a manual compact works and resets it', async () => {
    const t = goalTestEnv('compact-budget');
    let release = false;
    // The goal is held at its first step after the third summarizer failure until the test has seen the
    // pause: left to run, a loaded machine lets it fill the context to the hard limit meanwhile, where
    // one forced compaction (a summarizer call) runs by design, paused or not.
    let pauseSeen!: () => void;
    const pauseObserved = new Promise<void>((resolve) => {
      pauseSeen = resolve;
    });
    let paused = false;
    const summaries = () => model.seen.filter((request) => request.kind === 'summary').length;
    const model = compactionModel({
      // Medium outputs: not spooled, not large, so pruning cannot help and the summarizer is needed.
      main: async (n) => {
        if (release)
          return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };
        if (summaries() >= 3 && !paused) await pauseObserved;
        // After the pause, small and slower steps: they stay over the threshold without nearing the hard
        // limit while the test compacts by hand.
        return { delayMs: paused ? 1_500 : 0, toolCalls: [fillerCall(`m${n}`, paused ? 2 : 25)] };
      },
      summary: (n) => (n <= 3 ? openAIErrorResponse(500, 'summarizer is down') : undefined),
    });
    server.setFallback(model.fallback);
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, 'fill the context', ['--context-window', '24000']);
      const policy = async () => JSON.parse((await runCli(['policy', sessionId, '--json'], t.env)).stdout);
      await waitFor(
        'auto-compact to pause',
        async () => (await policy()).autoCompact === 'paused',
        150_000,
        300,
      );
      expect(summaries()).toBe(3);
      paused = true;
      pauseSeen();
      // Several more steps over the threshold: no fourth summarizer call.
      const mainsAtPause = model.seen.filter((request) => request.kind === 'main').length;
      await waitFor(
        'three more steps',
        () => model.seen.filter((r) => r.kind === 'main').length >= mainsAtPause + 3,
        60_000,
      );
      expect(summaries()).toBe(3);

      const manual = await runCli(['compact', sessionId, 'the', 'widget', '--json'], t.env);
      expect(manual.code, manual.stderr).toBe(0);
      expect(JSON.parse(manual.stdout.slice(manual.stdout.indexOf('{')))).toMatchObject({
        stage: 'summarized',
      });
      const after = await policy();
      expect(after).toMatchObject({ autoCompact: 'on', failures: 0 });
      // Issue 9.9: the running goal's policy shows its control state's size, within the 256 KiB budget.
      const STATE_BUDGET_BYTES = 256 * 1024;
      expect(after.controlState).toMatchObject({ budgetBytes: STATE_BUDGET_BYTES });
      expect(after.controlState.bytes).toBeGreaterThan(0);
      expect(after.controlState.bytes).toBeLessThan(STATE_BUDGET_BYTES);
      expect(after.controlState.ledgerMessages).toBeGreaterThanOrEqual(after.controlState.ledgerEntries);
      const off = await runCli(['policy', sessionId, '--auto-compact', 'off', '--json'], t.env);
      expect(off.code, off.stderr).toBe(0);
      expect(JSON.parse(off.stdout)).toMatchObject({ autoCompact: 'off' });
      expect(await policy()).toMatchObject({ autoCompact: 'off' });
      release = true;
      const watched = await runCli(['watch', sessionId, '--json'], t.env);
      expect(watched.code, watched.stderr).toBe(0);

      const store = await testStore(t.databaseUrl);
      const texts = (await store.listMessages(sessionId)).map(
        (m) => (m.message.content[0] as { text?: string }).text ?? '',
      );
      await store.close();
      expect(texts.some((text) => text.includes('failure 1 of 3 before it pauses'))).toBe(true);
      expect(texts.some((text) => text.includes('failure 2 of 3 before it pauses'))).toBe(true);
      expect(texts.some((text) => /auto-compact paused after 3 consecutive failures/.test(text))).toBe(true);
      // The focus topic reached the summarizer.
      const manualSummary = model.seen.filter((request) => request.kind === 'summary')[3];
      expect(JSON.stringify(manualSummary.body)).toContain('the widget');
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  });

  it('recovers from a provider overflow: shrinks the summarizer input and retries the step exactly once', async () => {
    const t = goalTestEnv('compact-overflow');
    const overflow = () =>
      openAIErrorResponse(400, "This model's maximum context length is 8192 tokens.", {
        code: 'context_length_exceeded',
      });
    let mainOverflowed = false;
    const model = compactionModel({
      main: (n) => {
        if (n === 6 && !mainOverflowed) {
          mainOverflowed = true;
          return overflow();
        }
        if (n >= 8) return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };
        return { toolCalls: [fillerCall(`o${n}`, 12)] };
      },
      summary: (n) => (n === 1 ? overflow() : undefined),
    });
    server.setFallback(model.fallback);
    try {
      const result = await runCli(
        goalArgs('run', 'overflow once', t, server, ['--context-window', '100000', '--json']),
        t.env,
      );
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', steps: 7 });
      const kinds = model.seen.map((request) => request.kind);
      // step 6 overflows, the summarizer overflows, the smaller summarizer request works, step 6 again.
      expect(kinds.slice(5, 9)).toEqual(['main', 'summary', 'summary', 'main']);
      const [firstSummary, secondSummary] = model.seen.filter((request) => request.kind === 'summary');
      expect(secondSummary.chars).toBeLessThan(firstSummary.chars);
      expect(model.seen.filter((request) => request.kind === 'main')).toHaveLength(8);
      expect(pairingProblems(model.seen[8].body)).toEqual([]);
      if (process.env.GOALRUN_SAVE_HISTORY_FIXTURE) {
        const { workflowId } = JSON.parse(result.stdout);
        const connection = await Connection.connect({ address: t.temporalAddress });
        const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
        await connection.close();
        saveHistoryFixture(packageVersion(), 'compaction-overflow', [historyJson(history)]);
      }
    } finally {
      server.setFallback(undefined);
    }
  });

  it('recovers to a consistent state when the worker dies during a compaction', async () => {
    const t = goalTestEnv('compact-crash');
    let finishFrom = Number.POSITIVE_INFINITY;
    const model = compactionModel({
      main: (n) =>
        n >= finishFrom
          ? { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] }
          : { toolCalls: [fillerCall(`c${n}`, 40)] },
      // The first summarizer call is slow: the worker is killed while it waits.
      summary: (n) => (n === 1 ? { delayMs: 10_000, text: 'never seen' } : undefined),
    });
    server.setFallback(model.fallback);
    let worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, 'survive a crash mid-compaction', [
        '--context-window',
        '12000',
      ]);
      await waitFor(
        'the summarizer to be called',
        () => model.seen.some((r) => r.kind === 'summary'),
        120_000,
        100,
      );
      await killAndWait(worker, 'SIGKILL');
      worker = spawnCli(['worker'], t.env);
      await waitFor(
        'a second summarizer call',
        () => model.seen.filter((r) => r.kind === 'summary').length >= 2,
        120_000,
      );
      finishFrom = model.seen.filter((r) => r.kind === 'main').length + 3;
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(watched.code, watched.stderr).toBe(0);
      expect(JSON.parse(watched.stdout).status).toBe('completed');

      for (const request of model.seen.filter((r) => r.kind === 'main')) {
        expect(pairingProblems(request.body)).toEqual([]);
      }
      const store = await testStore(t.databaseUrl);
      const messages = await store.listMessages(sessionId);
      await store.close();
      expect(new Set(messages.map((m) => m.key)).size).toBe(messages.length);
      const texts = messages.map((m) => (m.message.content[0] as { text?: string }).text ?? '');
      // The lost summarizer call counts as one failure; the next step's compaction succeeds.
      expect(texts.some((text) => text.includes('failure 1 of 3 before it pauses'))).toBe(true);
      expect(texts.filter((text) => text.startsWith('[goalrun] compacted')).length).toBeGreaterThanOrEqual(1);
      expect(messages.filter((m) => m.key === 'summary:1')).toHaveLength(1);
      expect(texts.join('\n')).not.toContain('never seen');
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
