/**
 * A provider that stalls mid-answer: the stream idle timeout gives the call up as ProviderStalled,
 * `status` says so while the step is retried, and the goal recovers on its own.
 * STALL_IDLE_TIMEOUT_S (seconds, or `default` for no flag) lets the recovery time be measured with
 * another timeout than the test's short one; the test asserts the recovery stays within it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STREAM_IDLE_TIMEOUT_S } from '../../core/limits';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { gate, startGoal } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

const setting = process.env.STALL_IDLE_TIMEOUT_S ?? '3';
const idleS = setting === 'default' ? DEFAULT_STREAM_IDLE_TIMEOUT_S : Number(setting);

describe('a provider stream stalled mid-answer', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it(
    'is retried as ProviderStalled, shown in status, and the goal completes',
    async () => {
      const t = goalTestEnv('stall');
      // Two stalled attempts. The second is held alive (pings) until the test has read status: left to
      // stall at once, its few seconds are a window a loaded machine's polls can miss.
      const statusSeen = gate();
      let heldUntil = 0;
      server.enqueue(
        { text: 'never finished', stallAfterFirstChunk: true },
        { text: 'never finished either', stallAfterFirstChunk: true, holdUntil: statusSeen.opened },
        { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'recovered' } }] },
      );
      const worker = spawnCli(['worker'], t.env);
      try {
        const { sessionId } = await startGoal(
          t,
          server,
          'answer once the provider is back',
          setting === 'default' ? [] : ['--stream-idle-timeout', String(idleS)],
        );
        const shown = await waitFor(
          'status to say the stream stalled',
          async () => {
            const status = await runCli(['status', sessionId], t.env);
            return /provider stream stalled, retrying \(attempt 2\)/.test(status.stdout)
              ? status.stdout
              : undefined;
          },
          (idleS * 2 + 60) * 1000,
          300,
        );
        heldUntil = Date.now();
        statusSeen.open();
        expect(shown).toMatch(new RegExp(`sent nothing for ${idleS} s`));
        const watched = await runCli(['watch', sessionId, '--json'], t.env, (idleS * 3 + 120) * 1000);
        expect(watched.code, watched.stderr).toBe(0);
        expect(JSON.parse(watched.stdout).status).toBe('completed');
        const requests = server.requests.slice(-3);
        expect(requests).toHaveLength(3);
        // Each stalled attempt was given up after the idle timeout (plus the retry backoff), not later:
        // the second one's stall began when the test let it go.
        const firstRecovery = requests[1].time - requests[0].time;
        const secondRecovery = requests[2].time - heldUntil;
        console.log(
          `stall recovery with a ${idleS} s idle timeout: ${firstRecovery} ms, then ${secondRecovery} ms`,
        );
        for (const gap of [firstRecovery, secondRecovery]) {
          expect(gap).toBeGreaterThanOrEqual(idleS * 1000);
          expect(gap).toBeLessThan(idleS * 1000 + 15_000);
        }
      } finally {
        statusSeen.open();
        await killAndWait(worker, 'SIGTERM');
      }
    },
    (idleS * 3 + 180) * 1000,
  );
});
