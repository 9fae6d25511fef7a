/**
 * Issue 8, acceptance 5: a model worker and a tools-only worker as two processes. The model worker
 * (`--role model`) holds the provider key and makes the model calls; the tools worker (`--role tools
 * --workspace-root DIR`) has no key in its environment (read from /proc/<pid>/environ) and runs every
 * tool of a goal started with the `--tools-queue` it prints. Proof of where the tools ran: a variable
 * only the tools worker has (passed to tool processes by config sandbox.env), and its log.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionStore } from '../../store/types';
import { killAndWait, runCli, scriptedModel, spawnCli, tempDir, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { toolResultsOf } from '../support/tool-results';

const PROVIDER_KEY = 'sk-model-worker-only-4c1e9a7b';
const TOOL_HOST_MARK = `tools-worker-${process.pid}`;

/** A process's environment, as the kernel shows it to anyone allowed to read it. */
function environOf(pid: number): Map<string, string> {
  const entries = fs
    .readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .filter(Boolean)
    .map((pair): [string, string] => {
      const at = pair.indexOf('=');
      return [pair.slice(0, at), pair.slice(at + 1)];
    });
  return new Map(entries);
}

describe('a model worker and a tools-only worker', () => {
  const t = goalTestEnv('toolhost');
  const root = t.workspace;
  const project = path.join(root, 'project');
  let store: SessionStore;
  let model: OpenAITestServer;
  let modelWorker: ReturnType<typeof spawnCli>;
  let toolsWorker: ReturnType<typeof spawnCli>;

  beforeAll(async () => {
    fs.mkdirSync(project);
    // Tool processes get TOOL_HOST_MARK from the environment of the worker that runs them.
    fs.writeFileSync(
      path.join(t.home, 'config.json'),
      `${JSON.stringify({ sandbox: { env: ['TOOL_HOST_MARK'] } })}\n`,
    );
    store = await testStore(t.databaseUrl);
    model = await startOpenAITestServer();
  });

  afterAll(async () => {
    for (const worker of [modelWorker, toolsWorker]) if (worker) await killAndWait(worker, 'SIGTERM');
    await store?.close();
    await model?.close();
  });

  /** Starts a goal in `workspace` whose tools run on the tools worker polling `toolsQueue`. */
  const startOnToolHost = (workspace: string, objective: string, toolsQueue: string) =>
    startGoal({ env: t.env, workspace }, model, objective, ['--tools-queue', toolsQueue], 'openai:gpt-4o');

  it('completes a goal whose tools run on the tools worker, which holds no provider key', async () => {
    modelWorker = spawnCli(['worker', '--role', 'model'], {
      ...t.env,
      OPENAI_API_KEY: PROVIDER_KEY,
      TOOL_HOST_MARK: 'the-model-worker',
    });
    toolsWorker = spawnCli(['worker', '--role', 'tools', '--workspace-root', root], {
      ...t.env,
      TOOL_HOST_MARK,
    });
    const toolsQueue = await waitFor('the tools worker to print its queue', () => {
      const printed = /--tools-queue '([^']+)'/.exec(toolsWorker.output());
      return printed?.[1];
    });
    await waitFor('the model worker to start', () =>
      modelWorker.output().includes('model worker polling task queue'),
    );

    // The key is where the model calls are, and nowhere near the tools.
    expect(environOf(modelWorker.pid as number).get('OPENAI_API_KEY')).toBe(PROVIDER_KEY);
    const toolsEnv = environOf(toolsWorker.pid as number);
    expect(toolsEnv.has('OPENAI_API_KEY')).toBe(false);
    expect(toolsEnv.has('ANTHROPIC_API_KEY')).toBe(false);
    expect([...toolsEnv.values()].join('\n')).not.toContain(PROVIDER_KEY);

    model.enqueue(
      {
        toolCalls: [
          {
            name: 'bash',
            args: { command: 'echo "ran on $TOOL_HOST_MARK in $PWD" > where.txt; cat where.txt' },
          },
        ],
      },
      { toolCalls: [{ name: 'file-read', args: { path: 'where.txt' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'tools ran remotely' } }] },
    );
    const { sessionId } = await startOnToolHost(project, 'say where the tools run', toolsQueue);
    const final = await waitFor(
      'the goal to end',
      async () => {
        const shown = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
        return ['completed', 'failed', 'blocked'].includes(shown.status) ? shown : undefined;
      },
      120_000,
      500,
    );
    expect(final.status).toBe('completed');

    // The bash process ran under the tools worker, in the goal's workspace.
    expect(fs.readFileSync(path.join(project, 'where.txt'), 'utf8')).toBe(
      `ran on ${TOOL_HOST_MARK} in ${project}\n`,
    );
    const results = await toolResultsOf(store, sessionId);
    expect(results.map((r) => [r.toolName, r.ok])).toEqual([
      ['bash', true],
      ['file-read', true],
      ['finish', true],
    ]);
    expect(results[1].text).toContain(TOOL_HOST_MARK);
    // Each worker's log names what it ran: the tools on one side, nothing of them on the other.
    expect(toolsWorker.output()).toContain(`bash of ${sessionId} ok`);
    expect(toolsWorker.output()).toContain(`file-read of ${sessionId} ok`);
    expect(modelWorker.output()).not.toContain(`bash of ${sessionId}`);
    // Every model call carried the model worker's key.
    expect(model.requests).toHaveLength(3);
    for (const request of model.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    }
  });

  it('says when nobody polls the tools queue a goal is started with (a typo would wait forever)', async () => {
    const toolsQueue = /--tools-queue '([^']+)'/.exec(toolsWorker.output())?.[1] as string;
    // A model that finishes at once: these goals call no tool, only the notice matters.
    const done = scriptedModel(t.home, [
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'nothing to do' } }] },
    ]);
    const args = ['--workspace', project, '--model', done, '--json'];
    const served = await runCli(['start', 'served', ...args, '--tools-queue', toolsQueue], t.env);
    expect(served.code, served.stderr).toBe(0);
    expect(served.stderr).not.toContain('no tool host');

    const typo = `${toolsQueue}-typo`;
    const unserved = await runCli(['start', 'unserved', ...args, '--tools-queue', typo], t.env);
    expect(unserved.code, unserved.stderr).toBe(0);
    expect(unserved.stderr).toContain(`no tool host is polling ${typo}`);
    expect(unserved.stderr).toContain('goalrun worker --role tools --workspace-root');
    const servedId = JSON.parse(served.stdout).sessionId;
    await waitFor('the served goal to finish', async () => {
      const shown = JSON.parse((await runCli(['status', servedId, '--json'], t.env)).stdout);
      return shown.status === 'completed';
    });
    // The unserved goal waits for its tool host before its first step: the tool host takes the
    // environment snapshot and reads the workspace's instructions (issue 15 §4, issue 19).
    const unservedId = JSON.parse(unserved.stdout).sessionId;
    const waiting = JSON.parse((await runCli(['status', unservedId, '--json'], t.env)).stdout);
    expect(waiting).toMatchObject({ status: 'running', steps: 0 });
    const cancelled = await runCli(['cancel', unservedId], t.env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    await waitFor('the unserved goal to be cancelled', async () => {
      const shown = JSON.parse((await runCli(['status', unservedId, '--json'], t.env)).stdout);
      return shown.status === 'cancelled';
    });
  });

  it('takes a workspace that only the tool host has; the tool host says when it is missing', async () => {
    const toolsQueue = /--tools-queue '([^']+)'/.exec(toolsWorker.output())?.[1] as string;
    // Inside the tool host's root, but absent (it would be on the tool host's machine).
    const remote = path.join(root, `absent-${process.pid}`);
    // Without a tool host the workspace must exist where the goal starts.
    const local = await runCli(
      ['start', 'x', '--workspace', remote, '--model', 'openai:gpt-4o', '--json'],
      t.env,
    );
    expect(local.code).toBe(2);
    expect(local.stderr).toContain(`workspace ${remote} does not exist`);
    // A relative path means nothing on another machine.
    const relative = await runCli(
      ['start', 'x', '--workspace', 'absent-dir', '--tools-queue', toolsQueue, '--model', 'openai:gpt-4o'],
      t.env,
    );
    expect(relative.code).toBe(2);
    expect(relative.stderr).toContain('must be given as an absolute path');

    const before = model.requests.length;
    model.enqueue(
      { toolCalls: [{ name: 'bash', args: { command: 'pwd' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'blocked', summary: 'no workspace there' } }] },
    );
    const { sessionId } = await startOnToolHost(remote, 'work on the tool host', toolsQueue);
    await waitFor('the goal to end', async () => {
      const shown = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
      return shown.status === 'blocked' ? shown : undefined;
    });
    const [bash] = await toolResultsOf(store, sessionId);
    expect(bash).toMatchObject({ toolName: 'bash', ok: false });
    expect(bash.text).toBe(`workspace directory does not exist: ${remote}`);
    expect(model.requests.length - before).toBe(2);
  });

  it("refuses the tools of a goal whose workspace is not under the tool host's root, and runs nothing", async () => {
    const toolsQueue = /--tools-queue '([^']+)'/.exec(toolsWorker.output())?.[1] as string;
    const elsewhere = tempDir('toolhost-elsewhere');
    model.enqueue(
      { toolCalls: [{ name: 'bash', args: { command: 'echo ran > ran.txt' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'blocked', summary: 'not served here' } }] },
    );
    const { sessionId } = await startOnToolHost(elsewhere, 'outside the root', toolsQueue);
    await waitFor('the goal to end', async () => {
      const shown = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
      return shown.status === 'blocked' ? shown : undefined;
    });
    const [bash] = await toolResultsOf(store, sessionId);
    expect(bash).toMatchObject({ toolName: 'bash', ok: false });
    expect(bash.text).toContain(
      `outside the tool host's workspace root: the goal's workspace ${elsewhere} is not under ${fs.realpathSync(root)}`,
    );
    expect(fs.existsSync(path.join(elsewhere, 'ran.txt'))).toBe(false);
    // The refusal reached the model: it is in the request after the call.
    expect(JSON.stringify(model.requests.at(-1)?.body)).toContain("outside the tool host's workspace root");

    // A root that is not a directory is refused before the worker starts.
    const missingRoot = path.join(root, 'no-such-root');
    const refused = await runCli(['worker', '--role', 'tools', '--workspace-root', missingRoot], t.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`--workspace-root ${missingRoot} is not a directory`);
  });
});
