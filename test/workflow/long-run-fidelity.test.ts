/**
 * Issue 9 long-run acceptance over HTTP: a goal of several dozen steps in a small window, with tool
 * outputs of several KB, against an OpenAI-compatible server that enforces its window as OpenAI does
 * (HTTP 400 `context_length_exceeded`), summarizes faithfully (every fact line it is given, the earlier
 * summary's included) and forces one overflow in the middle of the run. The goal completes; facts of
 * its early steps (an error string, a path, a file it wrote) are in the final request; the summarizer
 * runs at most once per four model steps. Sizes vary by case.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli';
import { compactionModel, compactionNotices, pairingProblems } from '../support/compaction-model';
import { goalTestEnv, testStore } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import { type OpenAITestServer, promptTokensOf, startOpenAITestServer } from '../support/openai-test-server';

const ERROR_FACT = 'ERROR E4711: widget exploded';
const PATH_FACT = 'FACT-1: the widget config lives at /srv/widget/config.yaml';
const WRITTEN_FILE = 'src/widget.js';

/** A bash call printing about `kb` KB of numbered filler lines. */
function filler(step: number, kb: number) {
  const line = `s${step} filler line number 1000\n`.length;
  const lines = Math.round((kb * 1024) / line);
  return {
    name: 'bash',
    args: { command: `seq 1000 ${999 + lines} | sed 's/^/s${step} filler line number /'` },
  };
}

interface Case {
  windowTokens: number;
  outputKb: number;
  steps: number;
  /** The main request that overflows once (its step is retried after a recovery compaction). */
  overflowAt: number;
}

const CASES: Case[] = [
  { windowTokens: 20_000, outputKb: 5, steps: 48, overflowAt: 24 },
  { windowTokens: 16_000, outputKb: 3, steps: 40, overflowAt: 17 },
  { windowTokens: 32_000, outputKb: 8, steps: 40, overflowAt: 23 },
  { windowTokens: 20_000, outputKb: 2, steps: 90, overflowAt: 61 },
];

describe('long runs keep every fact, within the window, without thrashing', () => {
  let server: OpenAITestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it.each(CASES)(
    'window $windowTokens, outputs $outputKb KB, $steps steps, overflow at request $overflowAt',
    async (c) => {
      const model = compactionModel({
        main: (n) => {
          if (n === 1) {
            return { toolCalls: [{ name: 'bash', args: { command: `echo "${ERROR_FACT}"; exit 1` } }] };
          }
          if (n === 2) {
            return {
              toolCalls: [
                { name: 'file-write', args: { path: WRITTEN_FILE, content: 'module.exports = 1;\n' } },
              ],
            };
          }
          if (n === 3) return { toolCalls: [{ name: 'bash', args: { command: `echo "${PATH_FACT}"` } }] };
          if (n === c.steps) {
            return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };
          }
          return { toolCalls: [filler(n, c.outputKb)] };
        },
      });
      let mains = 0;
      server = await startOpenAITestServer({
        fallback: model.fallback,
        windowTokens: c.windowTokens,
        // Main requests carry tools; the one numbered overflowAt overflows, once.
        overflow: (body) => (body.tools?.length ?? 0) > 0 && ++mains === c.overflowAt,
      });
      const t = goalTestEnv(`long-run-${c.windowTokens}`);
      const result = await runCli(
        goalArgs('run', 'build the widget', t, server, [
          '--context-window',
          String(c.windowTokens),
          '--json',
        ]),
        t.env,
        420_000,
      );
      expect(result.code, result.stdout + result.stderr).toBe(0);
      const status = JSON.parse(result.stdout);
      expect(status).toMatchObject({ status: 'completed', steps: c.steps });

      const mainRequests = model.seen.filter((request) => request.kind === 'main');
      const summaries = model.seen.filter((request) => request.kind === 'summary');
      expect(mainRequests).toHaveLength(c.steps);
      // The one forced overflow, and no request over the window otherwise.
      expect(server.overflows.map((overflow) => overflow.forced)).toEqual([true]);
      for (const request of mainRequests) {
        expect(promptTokensOf(request.body)).toBeLessThanOrEqual(c.windowTokens);
        expect(pairingProblems(request.body)).toEqual([]);
      }
      // Facts of the first steps are still in the last request.
      const last = JSON.stringify(mainRequests.at(-1)!.body.messages);
      expect(last).toContain(ERROR_FACT);
      expect(last).toContain(PATH_FACT);
      expect(last).toContain(WRITTEN_FILE);
      // Every summary after the first merged the one before it.
      for (const request of summaries.slice(1)) {
        expect(JSON.stringify(request.body.messages)).toContain('Earlier summary to merge');
      }
      expect(summaries.length * 4).toBeLessThanOrEqual(c.steps);

      const store = await testStore(t.databaseUrl);
      const messages = await store.listMessages(status.sessionId);
      await store.close();
      const notices = compactionNotices(messages);
      expect(notices.length).toBeGreaterThanOrEqual(2);
      const stats = JSON.parse((await runCli(['stats', status.sessionId, '--json'], t.env)).stdout);
      expect(stats.summarizer.inputShare).toBeGreaterThanOrEqual(0);
      expect(stats.summarizer.inputShare).toBeLessThan(1);
      const largest = Math.max(...mainRequests.map((request) => promptTokensOf(request.body)));
      console.log(
        `window ${c.windowTokens}, ${c.outputKb} KB outputs: ${c.steps} steps, ${notices.length} compactions ` +
          `(${notices.filter((n) => n.includes('forced')).length} forced), ${summaries.length} summarizer calls ` +
          `(${(summaries.length / c.steps).toFixed(2)} per step, ${(stats.summarizer.inputShare * 100).toFixed(1)} % ` +
          `of input tokens), largest request ${largest} tokens`,
      );
      // Every compaction's notice, to see how a size behaves: DEBUG_NOTICES=1 npx vitest run <this file>.
      if (process.env.DEBUG_NOTICES) console.log(notices.join('\n'));
    },
    480_000,
  );
});
