/**
 * Acceptance 2 and 5: a goal driven over HTTP by a local OpenAI-compatible server (streamed
 * responses with tool calls); 429 with Retry-After is retried no sooner than it says; 401 fails at once.
 */
import { Client, Connection, type WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goalResult } from '../../cli/goal-result';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { gate, goalArgs, startGoal } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

const SECRET = 'sk-test-secret-do-not-store-1234567890';

const goalTurns = () => [
  {
    text: 'Writing it.',
    toolCalls: [{ name: 'file-write', args: { path: 'out.txt', content: 'over http\n' } }],
  },
  { toolCalls: [{ name: 'bash', args: { command: 'cat out.txt' } }] },
  { toolCalls: [{ name: 'file-read', args: { path: 'out.txt' } }] },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done over http' } }] },
];

describe('a goal over an OpenAI-compatible HTTP endpoint', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  const model = 'openai-compatible:test-model';

  it('completes with streamed tool calls', async () => {
    const t = goalTestEnv('http', { OPENAI_COMPATIBLE_API_KEY: SECRET });
    const before = server.requests.length;
    server.enqueue(...goalTurns());
    const result = await runCli(goalArgs('run', 'write out.txt and check it', t, server, ['--json']), t.env);
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({ status: 'completed', steps: 4 });
    const requests = server.requests.slice(before);
    expect(requests).toHaveLength(4);
    expect(requests.every((request) => (request.body as { stream?: boolean }).stream === true)).toBe(true);
    // The second request carries the first tool call and its result: the structured history.
    const second = JSON.stringify(requests[1].body);
    expect(second).toContain('file-write');
    expect(second).toContain('wrote');
    // The key reaches the provider, and nothing else.
    expect(requests[0].headers.authorization).toBe(`Bearer ${SECRET}`);
    const store = await testStore(t.databaseUrl);
    const everything = JSON.stringify([
      await store.listMessages(status.sessionId),
      await store.listEvents(status.sessionId),
      await store.getSession(status.sessionId),
    ]);
    await store.close();
    expect(everything).not.toContain(SECRET);
  });

  it('retries a 429 no sooner than Retry-After, visible in status while it waits and afterwards', async () => {
    const t = goalTestEnv('http429', { OPENAI_API_KEY: SECRET });
    const before = server.requests.length;
    server.enqueue({
      status: 429,
      headers: { 'Retry-After': '4' },
      body: { error: { message: 'Rate limit reached', type: 'rate_limit' } },
    });
    // The retry (attempt 2) is held until the test has seen it in status: its window is otherwise
    // the few seconds a loaded machine's polls can miss.
    const retrySeen = gate();
    const turns = goalTurns();
    let answered = 0;
    server.setFallback(async () => {
      if (answered++ === 0) await retrySeen.opened;
      return turns.shift() ?? { text: 'no more turns' };
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, 'write out.txt and check it');
      const retrying = await waitFor(
        'status to show the retry',
        async () => {
          const shown = await runCli(['status', sessionId, '--json'], t.env);
          const view = JSON.parse(shown.stdout);
          return view.retrying ? view.retrying : undefined;
        },
        60_000,
        300,
      );
      retrySeen.open();
      expect(retrying.lastFailure).toContain('429');
      expect(retrying.attempt).toBe(2);
      const watched = await runCli(['watch', sessionId, '--json'], t.env);
      expect(watched.code, watched.stderr).toBe(0);
      const final = JSON.parse(watched.stdout);
      expect(final.status).toBe('completed');
      expect(final.recent.map((action: { text: string }) => action.text).join('\n')).toMatch(
        /step 1 · model call succeeded on attempt 2 after: .*429/,
      );
      const requests = server.requests.slice(before);
      expect(requests.length).toBe(5);
      expect(requests[1].time - requests[0].time).toBeGreaterThanOrEqual(4_000);
    } finally {
      retrySeen.open();
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  });

  it('fails the goal at once on 401 with a message naming provider, model and status', async () => {
    const t = goalTestEnv('http401', { OPENAI_API_KEY: SECRET });
    const before = server.requests.length;
    server.enqueue({
      status: 401,
      body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } },
    });
    const result = await runCli(
      ['run', 'anything', '--workspace', t.workspace, '--model', model, '--base-url', server.url, '--json'],
      t.env,
    );
    expect(result.code).toBe(1);
    const status = JSON.parse(result.stdout);
    expect(status.status).toBe('failed');
    expect(status.reason).toMatch(/openai-compatible/);
    expect(status.reason).toMatch(/test-model/);
    expect(status.reason).toMatch(/401/);
    expect(status.reason).not.toContain(SECRET);
    // At once: one request and no retry.
    expect(server.requests.length - before).toBe(1);
    const shown = await runCli(['status', status.sessionId], t.env);
    expect(shown.stdout).toMatch(/status\s+failed \(.*401/);
    // The workflow fails with GoalFailed, carrying the final snapshot (issue 26 item 1), never the key.
    const connection = await Connection.connect({ address: t.temporalAddress });
    try {
      const handle = new Client({ connection }).workflow.getHandle(status.workflowId);
      const failure = await handle.result().then(
        () => null,
        (err: unknown) => err as WorkflowFailedError,
      );
      expect(failure?.cause).toMatchObject({
        type: 'GoalFailed',
        message: status.reason,
        nonRetryable: true,
      });
      const result = await goalResult(handle);
      expect(result).toMatchObject({ sessionId: status.sessionId, status: 'failed', reason: status.reason });
      expect(JSON.stringify(result)).not.toContain(SECRET);
    } finally {
      await connection.close();
    }
  });

  it('sends the endpoint its own key (api_key_env), never OPENAI_API_KEY', async () => {
    const OPENAI_KEY = 'sk-openai-only-for-api-openai-com-5555';
    const OWN_KEY = 'sk-endpoint-own-key-6666';
    const NAMED_KEY = 'sk-endpoint-named-key-7777';
    const t = goalTestEnv('http-keys', { OPENAI_API_KEY: OPENAI_KEY, OPENAI_COMPATIBLE_API_KEY: OWN_KEY });
    const finish = { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'keyed' } }] };

    // The default: OPENAI_COMPATIBLE_API_KEY.
    let before = server.requests.length;
    server.enqueue(finish);
    const byDefault = await runCli(goalArgs('run', 'default key', t, server, ['--json']), t.env);
    expect(byDefault.code, byDefault.stderr).toBe(0);
    expect(server.requests[before].headers.authorization).toBe(`Bearer ${OWN_KEY}`);

    // --api-key-env names another variable: the worker reads it (the goal carries only its name).
    before = server.requests.length;
    server.enqueue(finish);
    const named = await runCli(
      goalArgs('run', 'named key', t, server, ['--json', '--api-key-env', 'MY_ENDPOINT_KEY']),
      { ...t.env, MY_ENDPOINT_KEY: NAMED_KEY },
    );
    expect(named.code, named.stderr).toBe(0);
    expect(server.requests[before].headers.authorization).toBe(`Bearer ${NAMED_KEY}`);
    const store = await testStore(t.databaseUrl);
    const session = await store.getSession(JSON.parse(named.stdout).sessionId);
    await store.close();
    expect(JSON.stringify(session)).toContain('MY_ENDPOINT_KEY');
    expect(JSON.stringify(session)).not.toContain(NAMED_KEY);

    // Only OPENAI_API_KEY set: the endpoint gets no key at all.
    const onlyOpenAI = { ...t.env, OPENAI_COMPATIBLE_API_KEY: undefined };
    delete onlyOpenAI.OPENAI_COMPATIBLE_API_KEY;
    before = server.requests.length;
    server.enqueue(finish);
    const none = await runCli(goalArgs('run', 'no key', t, server, ['--json']), onlyOpenAI);
    expect(none.code, none.stderr).toBe(0);
    expect(server.requests[before].headers.authorization).toBeUndefined();

    // Naming OPENAI_API_KEY for an endpoint that is not OpenAI's own is refused, saying why.
    const refused = await runCli(
      goalArgs('run', 'wrong key', t, server, ['--api-key-env', 'OPENAI_API_KEY']),
      t.env,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/OPENAI_API_KEY is the key of api\.openai\.com/);
    for (const request of server.requests) {
      expect(JSON.stringify(request.headers)).not.toContain(OPENAI_KEY);
    }
  });
});
