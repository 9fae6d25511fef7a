/**
 * The tool activity against real PostgreSQL: one transaction per result, facts in the event and
 * the return value, the retry notice, redaction, jobs and shutdown.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createToolActivity, retryNotice, type ToolRunInput } from '../../activities/tool-activity';
import { JobManager } from '../../activities/tools/jobs';
import { FailureType } from '../../core/errors';
import type { StoredMessage } from '../../core/messages';
import { storeKeys } from '../../core/store-keys';
import { openStore } from '../../store/open';
import type { SessionStore } from '../../store/types';
import { runActivity } from '../support/mock-activity';
import { makeWorkspace, removeWorkspace, sleepersWithMarker, uniqueMarker } from './helpers';

const SECRET = 'sk-test-0123456789abcdef';
const DB_PASSWORD = 'db-pass-w0rd!';

let store: SessionStore;
let workspace: string;
let pg: Client;
const jobs = new JobManager({ killGraceMs: 300 });

beforeAll(async () => {
  const home = await mkdtemp(path.join(os.tmpdir(), 'goalrun-tool-activity-'));
  store = await openStore({ databaseUrl: inject('databaseUrl'), home });
  workspace = await makeWorkspace();
  pg = new Client({ connectionString: inject('databaseUrl') });
  await pg.connect();
  activity = createToolActivity({
    store,
    secrets: [SECRET, DB_PASSWORD],
    processQueue: 'goalrun-tools@test-host',
    jobs,
  });
});

afterAll(async () => {
  await store?.close();
  await pg?.end();
  await removeWorkspace(workspace);
});

/** A session whose step 1 made one tool call; returns the input that runs it. */
async function sessionWithCall(toolName: string, args: unknown): Promise<ToolRunInput> {
  const sessionId = `tool-${randomUUID()}`;
  await store.createSession({
    id: sessionId,
    projectDir: workspace,
    projectHash: 'h',
    objective: 'test',
    model: 'scripted:x',
    workflowId: `wf-${sessionId}`,
  });
  const assistantKey = storeKeys.assistant(1, 1);
  const message: StoredMessage = {
    role: 'assistant',
    content: [{ type: 'tool-call', toolCallId: 'call_1_0', toolName, input: args }],
  };
  await store.appendMessage(sessionId, assistantKey, message);
  return { sessionId, stepNumber: 1, toolCallId: 'call_1_0', toolName, workspace, assistantKey };
}

let activity: ReturnType<typeof createToolActivity>;

const run = (input: ToolRunInput, attempt = 1) =>
  runActivity(new MockActivityEnvironment({ attempt }), activity.runTool, input);

async function rows(sessionId: string) {
  const spool = await pg.query('SELECT key, content FROM spool WHERE session_id = $1', [sessionId]);
  const events = await pg.query('SELECT key, data FROM events WHERE session_id = $1', [sessionId]);
  const messages = await pg.query(
    "SELECT key, content FROM messages WHERE session_id = $1 AND role = 'tool'",
    [sessionId],
  );
  return { spool: spool.rows, events: events.rows, messages: messages.rows };
}

describe('runTool', () => {
  it('stores spool row, event and message together, and returns the stub facts it stored', async () => {
    const input = await sessionWithCall('bash', { command: 'seq 1 5000' });
    const result = await run(input);
    const stored = await rows(input.sessionId);
    expect(stored.spool).toHaveLength(1);
    expect(stored.events).toHaveLength(1);
    expect(stored.messages).toHaveLength(1);
    expect(result.facts).toEqual({
      ok: true,
      changedWorkspace: true,
      bytes: Buffer.byteLength(stored.spool[0].content),
      chars: [...stored.spool[0].content].length,
      spoolId: result.entry.spoolId,
      lines: 5001,
      firstLine: '1',
      lastLine: '[exit code 0]',
      argsDigest: '{"command":"seq 1 5000"}',
    });
    expect(stored.events[0].data).toMatchObject({
      toolCallId: 'call_1_0',
      toolName: 'bash',
      attempt: 1,
      ...result.facts,
    });
    expect(JSON.stringify(stored.messages[0].content)).toContain(
      `tool-output {\\"id\\":\\"spool:${result.facts.spoolId}\\"`,
    );
    expect(result).toMatchObject({
      ok: true,
      changedWorkspace: true,
      firstLine: '1',
      lastLine: '[exit code 0]',
    });
  });

  it('returns the stored result on a retry without running the tool again', async () => {
    const input = await sessionWithCall('bash', { command: 'echo once >> runs.txt; cat runs.txt' });
    const first = await run(input);
    const second = await run(input, 2);
    expect(second).toEqual(first);
    expect((await rows(input.sessionId)).messages).toHaveLength(1);
  });

  it('tells the model on a later attempt that the command may already have run', async () => {
    const input = await sessionWithCall('bash', { command: 'echo hi' });
    await run(input, 3);
    const [message] = (await rows(input.sessionId)).messages;
    expect(message.content[0].output.value).toBe(`${retryNotice(3)}\nhi\n[exit code 0]`);
    expect(retryNotice(3)).toMatch(/may already have run/);
  });

  it('redacts known secrets, also inside URLs, from the message, spool, event and result', async () => {
    const big = Array.from({ length: 400 }, (_, i) => `line ${i} key=${SECRET}`).join('\n');
    writeFileSync(
      path.join(workspace, 'leak.txt'),
      `${big}\npostgres://u:${encodeURIComponent(DB_PASSWORD)}@h/db\n`,
    );
    const input = await sessionWithCall('file-read', { path: 'leak.txt' });
    const result = await run(input);
    const everything = JSON.stringify([await rows(input.sessionId), result]);
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(encodeURIComponent(DB_PASSWORD));
    expect(everything).not.toContain(DB_PASSWORD);
    expect(everything).toContain('[REDACTED]');
  });

  it('replaces NUL bytes so the result can be stored', async () => {
    const input = await sessionWithCall('bash', { command: "printf 'a\\0b'" });
    const result = await run(input);
    expect(result.ok).toBe(true);
    const [message] = (await rows(input.sessionId)).messages;
    expect(message.content[0].output.value).toBe('a\uFFFDb\n[exit code 0]');
  });

  it('makes every tool problem a result, not a failed activity', async () => {
    const unknown = await run(await sessionWithCall('nope', {}));
    expect(unknown).toMatchObject({ ok: false, firstLine: 'unknown tool "nope"' });
    const invalid = await run(await sessionWithCall('bash', { timeout_ms: 5 }));
    expect(invalid.firstLine).toMatch(/^invalid arguments for bash/);
    const outside = await run(await sessionWithCall('file-write', { path: '../escape.txt', content: 'x' }));
    expect(outside.firstLine).toMatch(/^outside the workspace: .*escape\.txt/);
  });

  it('starts a background job with the id the workflow gave, on this tool host', async () => {
    const marker = uniqueMarker();
    const input = await sessionWithCall('bash', { command: `sleep ${marker}`, run_in_background: true });
    const result = await run({ ...input, jobId: 'job-3' });
    expect(result.job).toMatchObject({
      jobId: 'job-3',
      command: `sleep ${marker}`,
      processQueue: 'goalrun-tools@test-host',
    });
    expect(result.job?.pid).toBeGreaterThan(0);
    // A retry (the result was stored) returns the same job, read back from the event.
    expect((await run({ ...input, jobId: 'job-3' }, 2)).job).toEqual(result.job);
    const listed = await runActivity(new MockActivityEnvironment(), activity.listSessionJobs, {
      sessionId: input.sessionId,
    });
    expect(listed.jobs.map((job) => job.jobId)).toEqual(['job-3']);
    const killed = await runActivity(new MockActivityEnvironment(), activity.killSessionJobs, {
      sessionId: input.sessionId,
    });
    expect(killed).toEqual({ killed: ['job-3'] });
    expect(sleepersWithMarker(marker)).toEqual([]);
  });

  it('runs an approved escalation outside the sandbox and says so in the event', async () => {
    const outsideDir = await mkdtemp(path.join(os.tmpdir(), 'goalrun-escalated-'));
    mkdirSync(outsideDir, { recursive: true });
    const command = `echo esc > ${outsideDir}/x.txt`;
    const sandboxed = await run(await sessionWithCall('bash', { command }));
    expect(sandboxed.ok).toBe(false);
    const input = await sessionWithCall('bash', {
      command,
      sandbox_permissions: 'require_escalated',
      justification: 'test',
    });
    const escalated = await run({ ...input, escalationApproved: true });
    expect(escalated.ok).toBe(true);
    expect((await rows(input.sessionId)).events[0].data).toMatchObject({ escalated: true });
    await removeWorkspace(outsideDir);
  });
});

describe('recordToolResult', () => {
  it('writes nothing when the message cannot be built (one transaction)', async () => {
    const input = await sessionWithCall('bash', { command: 'true' });
    await expect(
      store.recordToolResult({
        sessionId: input.sessionId,
        toolCallId: 'call_1_0',
        toolName: 'bash',
        messageKey: storeKeys.toolResult('call_1_0'),
        eventKey: storeKeys.toolEvent('call_1_0'),
        spoolContent: 'x'.repeat(10_000),
        message: () => {
          throw new Error('worker died between the writes');
        },
        facts: {
          ok: true,
          changedWorkspace: false,
          bytes: 1,
          lines: 1,
          firstLine: '',
          lastLine: '',
          argsDigest: '',
        },
      }),
    ).rejects.toThrow('worker died');
    expect(await rows(input.sessionId)).toEqual({ spool: [], events: [], messages: [] });
  });

  it('stores one result when two attempts race, and both see it', async () => {
    const input = await sessionWithCall('bash', { command: 'true' });
    const record = (n: number) => ({
      sessionId: input.sessionId,
      toolCallId: 'call_1_0',
      toolName: 'bash',
      messageKey: storeKeys.toolResult('call_1_0'),
      eventKey: storeKeys.toolEvent('call_1_0'),
      spoolContent: `attempt ${n} `.repeat(1_000),
      message: (spoolId: number | undefined): StoredMessage => ({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_1_0',
            toolName: 'bash',
            output: { type: 'text', value: `attempt ${n} spool:${spoolId}` },
          },
        ],
      }),
      facts: {
        ok: true,
        changedWorkspace: false,
        bytes: n,
        lines: 1,
        firstLine: `attempt ${n}`,
        lastLine: '',
        argsDigest: '',
      },
    });
    const results = await Promise.all([1, 2, 3, 4].map((n) => store.recordToolResult(record(n))));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const winner = results.find((r) => r.created);
    for (const result of results) {
      expect(result.seq).toBe(winner?.seq);
      expect(result.facts).toEqual(winner?.facts);
    }
    const stored = await rows(input.sessionId);
    expect(stored.spool).toHaveLength(1);
    expect(stored.messages).toHaveLength(1);
    // The message names the spool row that holds this same attempt's output.
    const value = stored.messages[0].content[0].output.value as string;
    expect(stored.spool[0].content.startsWith(value.split(' spool:')[0])).toBe(true);
  });
});

describe('a shutting-down tool host', () => {
  it('refuses new calls with a retryable ToolHostShuttingDown failure', async () => {
    const local = new JobManager();
    const stopping = createToolActivity({ store, jobs: local });
    await local.shutdown();
    const input = await sessionWithCall('bash', { command: 'touch never.txt' });
    const failure = await runActivity(new MockActivityEnvironment(), stopping.runTool, input).catch(
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({
      type: FailureType.ToolHostShuttingDown,
      message: 'goalrun worker is shutting down; command not started',
      nonRetryable: false,
    });
    expect((await rows(input.sessionId)).messages).toEqual([]);
  });
});

describe("a tools worker's workspace root", () => {
  it('refuses, as a stored error result, a call whose goal workspace is not inside the root, and runs nothing', async () => {
    const root = await makeWorkspace();
    const host = createToolActivity({ store, jobs, workspaceRoot: root });
    const input = await sessionWithCall('bash', { command: 'echo ran > ran.txt' });
    const refused = await runActivity(new MockActivityEnvironment(), host.runTool, input);
    expect(refused.ok).toBe(false);
    const [message] = (await rows(input.sessionId)).messages;
    expect(message.content[0].output.type).toBe('error-text');
    expect(message.content[0].output.value).toBe(
      `outside the tool host's workspace root: the goal's workspace ${workspace} is not under ${root}; ` +
        `this tools worker (goalrun worker --role tools --workspace-root ${root}) runs tools only for goals ` +
        'whose workspace is inside its root, so nothing was run',
    );
    expect(existsSync(path.join(workspace, 'ran.txt'))).toBe(false);

    // The same call from a goal whose workspace is inside the root runs.
    const project = path.join(root, 'project');
    mkdirSync(project);
    const served = await runActivity(new MockActivityEnvironment(), host.runTool, {
      ...(await sessionWithCall('bash', { command: 'echo ran > ran.txt' })),
      workspace: project,
    });
    expect(served.ok).toBe(true);
    expect(readFileSync(path.join(project, 'ran.txt'), 'utf8')).toBe('ran\n');
    await removeWorkspace(root);
  });
});
