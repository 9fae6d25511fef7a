/**
 * The model step's heartbeats are paced: a stream of many chunks sends a few beats, not one per
 * chunk, while every change a retry must know (the provider began billing, the unreachable clock)
 * is sent at once, and the last beat before a failure always goes. The pacer itself on a fake clock;
 * the step over real HTTP (the local test server) and real PostgreSQL.
 */
import os from 'node:os';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MIN_HEARTBEAT_GAP_MS, pacedHeartbeat } from '../../activities/heartbeat-pacer';
import { createModelStepActivity } from '../../activities/model-step-activity';
import { storeKeys } from '../../core/store-keys';
import { openStore } from '../../store/open';
import type { SessionStore } from '../../store/types';
import { runActivity } from '../support/mock-activity';
import { modelStepSession } from '../support/model-step-session';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

describe('the heartbeat pacer', () => {
  function pacer() {
    let clock = 1_000;
    const sent: Array<{ count: number; billed: boolean }> = [];
    const state = { count: 0, billed: false };
    const beat = pacedHeartbeat(
      (details: { count: number; billed: boolean }) => sent.push(details),
      () => ({ ...state }),
      ({ billed }) => String(billed),
      500,
      () => clock,
    );
    return { beat, sent, state, tick: (ms: number) => (clock += ms) };
  }

  it('sends the first beat, then at most one per gap while nothing material changes', () => {
    const { beat, sent, state, tick } = pacer();
    for (let chunk = 1; chunk <= 100; chunk++) {
      state.count = chunk;
      beat();
      tick(10);
    }
    // 100 chunks over 1 s: the first, then one each 500 ms.
    expect(sent.map((details) => details.count)).toEqual([1, 51]);
  });

  it('sends a material change at once, and a forced beat whatever the pace', () => {
    const { beat, sent, state, tick } = pacer();
    beat();
    tick(1);
    state.count = 2;
    beat();
    state.billed = true;
    beat();
    tick(1);
    state.count = 3;
    beat();
    beat(true);
    expect(sent).toEqual([
      { count: 0, billed: false },
      { count: 2, billed: true },
      { count: 3, billed: true },
    ]);
  });
});

describe('the model step streaming a long answer', () => {
  let server: OpenAITestServer;
  let store: SessionStore;
  beforeAll(async () => {
    server = await startOpenAITestServer();
    store = await openStore({ databaseUrl: inject('databaseUrl'), home: os.tmpdir() });
  });
  afterAll(async () => {
    await store?.close();
    await server?.close();
  });

  it('beats a few times, not once per chunk, and says at once that the provider is billing', async () => {
    const input = await modelStepSession(store, 'paced', 'write a long answer', { baseUrl: server.url });
    // 200 pieces of 16 characters, each its own chunk, all within one pacing gap.
    const text = 'a long answer. '.repeat(214).slice(0, 3200);
    server.enqueue({ text, pieceDelayMs: 1 });
    const environment = new MockActivityEnvironment({ attempt: 1 });
    const heartbeats: Array<{ received: number; answering?: boolean }> = [];
    environment.on('heartbeat', (details: { received: number; answering?: boolean }) =>
      heartbeats.push(details),
    );
    const started = Date.now();
    const result = await runActivity(
      environment,
      createModelStepActivity({ store, env: {} }).modelStep,
      input,
    );
    const tookMs = Date.now() - started;
    expect(result.textPreview.startsWith('a long answer.')).toBe(true);
    const stored = await store.getMessageByKey(input.sessionId, storeKeys.assistant(1, 1));
    expect(stored?.message.content).toEqual([{ type: 'text', text }]);
    // At most the first beat, the billing one, and one per gap of the time the stream took.
    expect(heartbeats.length).toBeLessThanOrEqual(2 + Math.ceil(tookMs / MIN_HEARTBEAT_GAP_MS));
    expect(heartbeats.length).toBeLessThan(50);
    expect(heartbeats[0]).toMatchObject({ answering: false });
    expect(heartbeats.some((details) => details.answering === true)).toBe(true);
  });
});
