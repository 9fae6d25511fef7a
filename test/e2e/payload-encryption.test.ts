/**
 * Issue 20, §5: encrypted payloads, end to end through the built CLI on a real Temporal server.
 *
 * - With GOALRUN_PAYLOAD_KEYS set, the history a goal leaves (`temporal workflow show --output json`,
 *   the raw events) holds neither the objective nor a tool's arguments, decoded from base64 or not;
 *   the same check finds both in a goal run without keys, so it is not blind. Through
 *   `goalrun codec-server`, the temporal CLI shows them decrypted again.
 * - A worker without the key stops by itself with one clear line, instead of failing the goal's
 *   workflow task over and over; `status` says why the goal waits; a worker with the key finishes it.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { requireTemporalBinary } from '../../cli/temporal-binary';
import { killAndWait, runCli, scriptedModel, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { findFreePort } from '../support/temporal-server';

const run = promisify(execFile);
const KEY_ID = 'k1';
const KEYS = `${KEY_ID}:${randomBytes(32).toString('base64')}`;
const marker = randomUUID().slice(0, 8);
const OBJECTIVE = `Write the ledger of project ${marker} into note.txt`;
const TOOL_ARGUMENT = `tool-argument-${marker}`;
const turns = [
  { toolCalls: [{ name: 'bash', args: { command: `echo ${TOOL_ARGUMENT} > note.txt` } }] },
  { toolCalls: [{ name: 'file-read', args: { path: 'note.txt' } }] },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: `wrote ${TOOL_ARGUMENT}` } }] },
];
/** How long a worker without the key may take to start, meet the goal and stop. */
const WORKER_STOP_TIMEOUT_MS = 90_000;

const children: Array<ReturnType<typeof spawnCli>> = [];
afterAll(async () => {
  for (const child of children) await killAndWait(child);
});

/** Every string of a JSON document, and the text of those that are base64 (payload data, metadata). */
function textsOf(value: unknown): string[] {
  if (typeof value === 'string') {
    const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(value) ? Buffer.from(value, 'base64').toString('utf8') : '';
    return decoded ? [value, decoded] : [value];
  }
  if (Array.isArray(value)) return value.flatMap(textsOf);
  if (value && typeof value === 'object') return Object.values(value).flatMap(textsOf);
  return [];
}

/** `temporal workflow show --output json` of a workflow: its raw history events. */
async function rawHistory(address: string, workflowId: string, extra: string[] = []): Promise<unknown> {
  const { stdout } = await run(
    requireTemporalBinary(),
    ['workflow', 'show', '--workflow-id', workflowId, '--address', address, '--output', 'json', ...extra],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout);
}

/** Starts a goal through the CLI, runs a worker until it completes; returns its ids. */
async function runGoal(env: NodeJS.ProcessEnv, workspace: string, home: string) {
  const started = await runCli(
    ['start', OBJECTIVE, '--workspace', workspace, '--model', scriptedModel(home, turns), '--json'],
    env,
  );
  expect(started.code, started.stderr).toBe(0);
  const ids = JSON.parse(started.stdout) as { sessionId: string; workflowId: string };
  const watched = await runCli(['watch', ids.sessionId], env);
  expect(watched.code, watched.stderr).toBe(0);
  return ids;
}

describe('encrypted payloads', () => {
  it('keep the objective and tool arguments out of the history, and the codec server opens them', async () => {
    const plain = goalTestEnv('plain-payloads');
    const encrypted = goalTestEnv('encrypted-payloads', { GOALRUN_PAYLOAD_KEYS: KEYS });
    for (const t of [plain, encrypted]) {
      const worker = spawnCli(['worker'], t.env);
      children.push(worker);
      // Started one after the other, before any goal: on a busy machine, two workers loading at once
      // next to a starting CLI can make its probe of the server time out.
      await waitFor('the worker to poll', () => worker.output().includes('polling task queue'), 60_000);
    }

    const control = await runGoal(plain.env, plain.workspace, plain.home);
    const controlTexts = textsOf(await rawHistory(plain.temporalAddress, control.workflowId));
    expect(controlTexts.some((text) => text.includes(OBJECTIVE))).toBe(true);
    expect(controlTexts.some((text) => text.includes(TOOL_ARGUMENT))).toBe(true);

    const goal = await runGoal(encrypted.env, encrypted.workspace, encrypted.home);
    const texts = textsOf(await rawHistory(encrypted.temporalAddress, goal.workflowId));
    expect(texts).toContain('binary/encrypted');
    expect(texts.filter((text) => text.includes(marker))).toEqual([]);
    // What the CLI reads back over the HTTP API (TEMPORAL_HTTP_ADDRESS) is decrypted.
    const status = await runCli(['status', goal.sessionId, '--json'], encrypted.env);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ objective: OBJECTIVE, status: 'completed' });

    const port = await findFreePort();
    const token = randomUUID();
    const codec = spawnCli(['codec-server', '--port', String(port), '--token', token], { ...encrypted.env });
    children.push(codec);
    await waitFor('the codec server', () => codec.output().includes('codec server on'));
    const endpoint = `http://127.0.0.1:${port}`;
    const decoded = textsOf(
      await rawHistory(encrypted.temporalAddress, goal.workflowId, [
        '--codec-endpoint',
        endpoint,
        '--codec-auth',
        `Bearer ${token}`,
      ]),
    );
    expect(decoded.some((text) => text.includes(OBJECTIVE))).toBe(true);
    expect(decoded.some((text) => text.includes(TOOL_ARGUMENT))).toBe(true);
    // Without the token the server refuses, and the payloads stay sealed.
    const refused = await fetch(`${endpoint}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ payloads: [] }),
    });
    expect(refused.status).toBe(401);
  });

  it('stop a worker without the key with a clear error; the goal waits for one that has it', async () => {
    const t = goalTestEnv('missing-key', { GOALRUN_PAYLOAD_KEYS: KEYS });
    const started = await runCli(
      ['start', OBJECTIVE, '--workspace', t.workspace, '--model', scriptedModel(t.home, turns), '--json'],
      t.env,
    );
    expect(started.code, started.stderr).toBe(0);
    const { sessionId } = JSON.parse(started.stdout) as { sessionId: string };

    const keyless = spawnCli(['worker'], { ...t.env, GOALRUN_PAYLOAD_KEYS: undefined });
    children.push(keyless);
    const code = await waitFor(
      'the worker without the key to stop',
      () => (keyless.exitCode === null ? undefined : keyless.exitCode),
      WORKER_STOP_TIMEOUT_MS,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\nworker output:\n${keyless.output().slice(-3_000)}`);
    });
    expect(code, keyless.output()).toBe(2);
    expect(keyless.output()).toMatch(
      /worker stopped: cannot decrypt a payload encrypted with key "k1": it is not among the payload keys \(GOALRUN_PAYLOAD_KEYS or the config key payload_keys_file; none is set\)/,
    );

    // The goal is not failed: it waits, and says why.
    const status = await runCli(['status', sessionId], t.env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/waiting for a worker/);
    expect(status.stdout).toMatch(
      /a worker could not start it: cannot decrypt a payload encrypted with key "k1"/,
    );

    children.push(spawnCli(['worker'], t.env));
    const watched = await runCli(['watch', sessionId], t.env);
    expect(watched.code, watched.stderr).toBe(0);
  });

  it('stop a worker whose keys do not include the goal key, naming the keys it has', async () => {
    const t = goalTestEnv('wrong-key', { GOALRUN_PAYLOAD_KEYS: KEYS });
    const started = await runCli(
      ['start', OBJECTIVE, '--workspace', t.workspace, '--model', scriptedModel(t.home, turns), '--json'],
      t.env,
    );
    expect(started.code, started.stderr).toBe(0);
    const other = spawnCli(['worker'], {
      ...t.env,
      GOALRUN_PAYLOAD_KEYS: `k2:${randomBytes(32).toString('base64')}`,
    });
    children.push(other);
    await waitFor(
      'the worker with another key to stop',
      () => other.exitCode !== null,
      WORKER_STOP_TIMEOUT_MS,
    );
    expect(other.exitCode, other.output()).toBe(2);
    expect(other.output()).toMatch(/key "k1": it is not among the payload keys .*this process has "k2"/);
    const { sessionId } = JSON.parse(started.stdout) as { sessionId: string };
    await runCli(['cancel', sessionId], t.env);
  });
});
