/**
 * Issue 27 §5: with OTEL_EXPORTER_OTLP_ENDPOINT, a local OTLP receiver gets one trace per goal step
 * (its `invoke_agent` span, its model call's `chat` span and its tools' `execute_tool` spans share a
 * trace of their own), with no span twice though the worker is restarted in the middle of a step and
 * the next one replays the goal; span attributes carry no secret and no message text unless
 * `--trace-content` is given.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, killAndWait, runCli, spawnCli, tempDir, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { goalArgs, TEST_MODEL } from '../support/goal-steps';
import {
  type OpenAITestServer,
  promptText,
  requestStep,
  startOpenAITestServer,
  type TestResponse,
} from '../support/openai-test-server';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver';

const SECRET = 'sk-test-trace-secret-0123456789';
const FILE_TEXT = 'alpha-file-content-never-in-a-span';
const CHAT = `chat ${TEST_MODEL.split(':')[1]}`;

/** A goal of three steps: a todo-write and a read, two reads, finish. */
function turn(step: number): TestResponse {
  if (step === 1) {
    return {
      text: 'Planning.',
      toolCalls: [
        { name: 'todo-write', args: { todos: [{ content: 'read a' }, { content: 'read b and c' }] } },
        { name: 'file-read', args: { path: 'a.txt' } },
      ],
    };
  }
  if (step === 2) {
    return {
      toolCalls: [
        { name: 'file-read', args: { path: 'b.txt' } },
        { name: 'file-read', args: { path: 'c.txt' } },
      ],
    };
  }
  return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'read all three' } }] };
}

function writeFiles(workspace: string): void {
  for (const name of ['a', 'b', 'c'])
    fs.writeFileSync(path.join(workspace, `${name}.txt`), `${FILE_TEXT} ${name}\n`);
}

function ofSession(spans: ReceivedSpan[], sessionId: string, name: string): ReceivedSpan[] {
  return spans.filter(
    (span) => span.name === name && span.attributes['gen_ai.conversation.id'] === sessionId,
  );
}

describe('traces over OTLP', () => {
  let server: OpenAITestServer;
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    server = await startOpenAITestServer();
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  const tracedEnv = (name: string) =>
    goalTestEnv(name, {
      OPENAI_API_KEY: SECRET,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      // Exported within a tenth of a second of ending, so the test need not wait for a batch.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });

  it('sends one trace per step, each span once, across a worker restart in the middle of a step', async () => {
    const t = tracedEnv('traces');
    writeFiles(t.workspace);
    const objective = `trace-goal-${Date.now()}`;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held = false;
    server.setFallback(async (body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      const step = requestStep(body);
      if (step === 2) {
        held = true;
        await released;
      }
      return turn(step);
    });
    const first = spawnCli(['worker'], t.env);
    let second: ReturnType<typeof spawnCli> | null = null;
    try {
      const { sessionId } = expectJson(
        await runCli(goalArgs('start', objective, t, server, ['--json']), t.env),
      );
      await waitFor('the second model call to be held', () => held, 180_000, 50);
      await waitFor(
        "step 1's spans",
        () => ofSession(receiver.spans, sessionId, 'invoke_agent goalrun').length === 1,
        60_000,
        50,
      );
      // The worker stops polling, finishes the model call in flight, and leaves; the next one replays.
      const exited = new Promise<void>((resolve) => first.once('exit', () => resolve()));
      first.kill('SIGTERM');
      await waitFor('the worker to stop polling', () => /DRAINING/.test(first.output()), 60_000, 50);
      release();
      await exited;
      second = spawnCli(['worker'], t.env);
      const done = expectJson(await runCli(['watch', sessionId, '--json'], t.env, 300_000));
      expect(done.status).toBe('completed');
      await killAndWait(second, 'SIGTERM');

      const spans = receiver.spans;
      const steps = (list: ReceivedSpan[]) => list.map((span) => span.attributes['goalrun.step']).sort();
      const invoke = ofSession(spans, sessionId, 'invoke_agent goalrun');
      const chat = ofSession(spans, sessionId, CHAT);
      const tools = ofSession(spans, sessionId, 'execute_tool file-read');
      expect(steps(invoke)).toEqual([1, 2, 3]);
      expect(steps(chat)).toEqual([1, 2, 3]);
      expect(steps(tools)).toEqual([1, 2, 2]);
      // Nothing twice, though the second worker replayed steps 1 and 2.
      const ids = spans.map((span) => span.spanId);
      expect(new Set(ids).size).toBe(ids.length);
      expect(spans.filter((span) => span.name === 'RunWorkflow:goalWorkflow')).toHaveLength(1);

      // One trace per step: the step's spans share its trace, and no two steps share one.
      const traceOf = new Map(invoke.map((span) => [span.attributes['goalrun.step'], span.traceId]));
      expect(new Set(traceOf.values()).size).toBe(3);
      for (const span of [...chat, ...tools]) {
        expect(span.traceId, span.name).toBe(traceOf.get(span.attributes['goalrun.step']));
      }
      for (const span of invoke) {
        expect(span.parentSpanId).toBe('');
        // Linked to the workflow's span, where the client's start and the workflow live.
        expect(span.links).toHaveLength(1);
      }
      // Temporal's spans sit between the step and its calls: the model call ran in an activity of the step.
      const step1 = spans.filter((span) => span.traceId === traceOf.get(1)).map((span) => span.name);
      expect(step1).toEqual(expect.arrayContaining(['StartActivity:modelStep', 'RunActivity:modelStep']));

      expect(chat[0].attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai-compatible',
        'gen_ai.request.model': 'test-model',
      });
      expect(chat[0].attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(chat[0].attributes).toHaveProperty('gen_ai.usage.cache_read.input_tokens');
      expect(invoke.find((span) => span.attributes['goalrun.step'] === 1)?.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'goalrun',
      });
      // The client's start is a span too, from the `start` process.
      expect(spans.some((span) => span.name === 'StartWorkflow:goalWorkflow')).toBe(true);

      const everything = JSON.stringify(spans);
      expect(everything).not.toContain(SECRET);
      expect(everything).not.toContain(FILE_TEXT);
      expect(everything).not.toContain('gen_ai.input.messages');
      expect(everything).not.toContain('read b and c');
    } finally {
      release();
      await killAndWait(first, 'SIGKILL');
      if (second) await killAndWait(second, 'SIGKILL');
    }
  }, 600_000);

  it('traces no workflow that was started without a trace context, on a worker that traces', async () => {
    const t = tracedEnv('traces-unasked');
    writeFiles(t.workspace);
    const objective = `trace-unasked-${Date.now()}`;
    server.setFallback((body) =>
      promptText(body).includes(objective) ? turn(requestStep(body)) : { text: 'not mine' },
    );
    const before = receiver.spans.length;
    const worker = spawnCli(['worker'], t.env);
    try {
      // The starter has no endpoint, so the start carries no trace context.
      const { OTEL_EXPORTER_OTLP_ENDPOINT: _endpoint, ...untracedEnv } = t.env;
      const { sessionId } = expectJson(
        await runCli(goalArgs('start', objective, t, server, ['--json']), untracedEnv),
      );
      const done = expectJson(await runCli(['watch', sessionId, '--json'], untracedEnv, 300_000));
      expect(done.status).toBe('completed');
      // The worker's own spans still go out: its model calls are traced, each a trace of its own.
      await waitFor(
        "the model calls' spans",
        () => ofSession(receiver.spans, sessionId, CHAT).length === 3,
        60_000,
        50,
      );
      await killAndWait(worker, 'SIGTERM');
      const spans = receiver.spans.slice(before);
      const names = spans.map((span) => span.name);
      expect(names).toContain('RunActivity:modelStep');
      // The workflow made none: no RunWorkflow, no StartActivity, no step span.
      expect(names.filter((name) => /^(RunWorkflow|StartActivity|StartWorkflow):/.test(name))).toEqual([]);
      expect(ofSession(spans, sessionId, 'invoke_agent goalrun')).toEqual([]);
    } finally {
      await killAndWait(worker, 'SIGKILL');
    }
  }, 300_000);

  it('loads no OpenTelemetry SDK and sends nothing without an endpoint', async () => {
    const t = goalTestEnv('traces-off', { OPENAI_API_KEY: SECRET });
    writeFiles(t.workspace);
    const objective = `trace-off-${Date.now()}`;
    server.setFallback((body) =>
      promptText(body).includes(objective) ? turn(requestStep(body)) : { text: 'not mine' },
    );
    const before = receiver.spans.length;
    const record = path.join(tempDir('trace-modules'), 'modules.txt');
    const env = {
      ...t.env,
      NODE_OPTIONS: `--require ${path.resolve(__dirname, '../support/module-recorder.cjs')}`,
      GOALRUN_MODULE_RECORD: record,
    };
    const result = await runCli(goalArgs('run', objective, t, server, ['--json']), env);
    expect(result.code, result.stderr).toBe(0);
    const modules = fs.readFileSync(record, 'utf8').split('\n');
    // The workflow bundle carries its own copy of the interceptors; the process itself loads none of it.
    for (const sdk of ['sdk-trace-base', 'exporter-trace-otlp-http', 'context-async-hooks']) {
      expect(modules.filter((file) => file.includes(`@opentelemetry/${sdk}/`))).toEqual([]);
    }
    expect(receiver.spans.length).toBe(before);
  }, 300_000);

  it('carries message text and tool output with --trace-content, and still no secret', async () => {
    const t = tracedEnv('traces-content');
    writeFiles(t.workspace);
    const objective = `trace-content-${Date.now()}`;
    server.setFallback((body) =>
      promptText(body).includes(objective) ? turn(requestStep(body)) : { text: 'not mine' },
    );
    const before = receiver.spans.length;
    const result = await runCli(goalArgs('run', objective, t, server, ['--trace-content', '--json']), t.env);
    expect(result.code, result.stderr).toBe(0);
    const { sessionId } = JSON.parse(result.stdout);
    const spans = receiver.spans.slice(before);
    const chat = ofSession(spans, sessionId, CHAT);
    expect(chat).toHaveLength(3);
    expect(String(chat[0].attributes['gen_ai.input.messages'])).toContain(objective);
    expect(String(chat[0].attributes['gen_ai.output.messages'])).toContain('todo-write');
    const tools = ofSession(spans, sessionId, 'execute_tool file-read');
    expect(tools.map((span) => String(span.attributes['gen_ai.tool.call.result'])).join('\n')).toContain(
      FILE_TEXT,
    );
    expect(JSON.stringify(spans)).not.toContain(SECRET);
  }, 300_000);
});
