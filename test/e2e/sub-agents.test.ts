/**
 * Issue 27 §2, sub-agents end to end over HTTP: a parent goal's model calls `agent` twice in one step;
 * each call starts the goal workflow as a Temporal child workflow (ParentWorkflowId set), the children
 * claim one task each of the parent's graph through its command queue, one finishes and one reaches
 * its money share and hands back in a tools-off turn, ending budget_exhausted; the parent's status
 * shows each child's cost, and its own cost adds them up. Pausing a parent pauses the child it waits
 * for, held mid-call by a gate in the test model, and cancelling the parent cancels it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIdOf } from '../../core/workflow-names';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { gate, startGoal, statusOf } from '../support/goal-steps';
import {
  type ChatRequestBody,
  type OpenAITestServer,
  startOpenAITestServer,
  type TestResponse,
} from '../support/openai-test-server';
import { PRICED_MODEL, writePricedModelCard } from '../support/priced-model';

/** Every turn reports 500 output tokens: $0.005 on the priced card (a call reserves $0.01). */
const USAGE = { prompt_tokens: 400, completion_tokens: 500 };

/** The first user message of a request: the objective of the goal that sent it. */
function objectiveOf(body: ChatRequestBody): string {
  const first = (body.messages ?? []).find((message) => message.role === 'user');
  return JSON.stringify(first?.content ?? '');
}

/** Answers each goal by its objective, turn after turn: `scripts[marker][n]` is its n-th answer. */
function byObjective(
  server: OpenAITestServer,
  scripts: Record<string, Array<TestResponse | ((body: ChatRequestBody) => Promise<TestResponse>)>>,
) {
  const counts = new Map<string, number>();
  server.setFallback(async (body) => {
    const objective = objectiveOf(body);
    const marker = Object.keys(scripts).find((key) => objective.includes(key));
    if (!marker) return { status: 400, body: `no script for ${objective.slice(0, 80)}` };
    const n = counts.get(marker) ?? 0;
    counts.set(marker, n + 1);
    const turn = scripts[marker][n] ?? { text: `(${marker}: no turn ${n + 1})`, usage: USAGE };
    return typeof turn === 'function' ? turn(body) : turn;
  });
}

describe('sub-agents', () => {
  let server: OpenAITestServer;
  let client: Client;
  beforeAll(async () => {
    server = await startOpenAITestServer();
    client = new Client({
      connection: await Connection.connect({ address: goalTestEnv('agents-probe').temporalAddress }),
    });
  });
  afterAll(async () => {
    await server?.close();
    await client?.connection.close();
  });

  it('runs two children as child workflows that claim tasks; one ends budget_exhausted; costs add up', async () => {
    const t = goalTestEnv('agents', { OPENAI_API_KEY: 'sk-test' });
    writePricedModelCard(t.home);
    const handBackTools: unknown[] = [];
    byObjective(server, {
      'PARENT-GOAL': [
        {
          toolCalls: [
            {
              name: 'todo-write',
              args: {
                todos: [
                  { id: 'task-1', content: 'write a.txt' },
                  { id: 'task-2', content: 'write b.txt' },
                ],
              },
            },
            { name: 'agent', args: { prompt: 'CHILD-A: take task-1 and write a.txt' } },
            {
              name: 'agent',
              args: { objective: 'CHILD-B: take task-2 and write b.txt', max_cost_usd: 0.012 },
            },
          ],
          usage: USAGE,
        },
        {
          toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'both children reported' } }],
          usage: USAGE,
        },
      ],
      'CHILD-A': [
        {
          toolCalls: [
            { name: 'todo-write', args: { merge: true, todos: [{ id: 'task-1', status: 'in_progress' }] } },
            { name: 'file-write', args: { path: 'a.txt', content: 'a\n' } },
          ],
          usage: USAGE,
        },
        {
          toolCalls: [
            { name: 'todo-write', args: { merge: true, todos: [{ id: 'task-1', status: 'completed' }] } },
            { name: 'finish', args: { status: 'complete', summary: 'a.txt written' } },
          ],
          usage: USAGE,
        },
      ],
      'CHILD-B': [
        {
          toolCalls: [
            { name: 'todo-write', args: { merge: true, todos: [{ id: 'task-2', status: 'in_progress' }] } },
          ],
          usage: USAGE,
        },
        // The hand-back turn: offered no tools.
        async (body) => {
          handBackTools.push(body.tools ?? []);
          return { text: 'HANDED-BACK: task-2 claimed, b.txt not written yet', usage: USAGE };
        },
      ],
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId, workflowId } = await startGoal(
        t,
        server,
        'PARENT-GOAL: split the work',
        ['--max-cost-usd', '1'],
        PRICED_MODEL,
      );
      const done = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
      expect(done.code, done.stdout + done.stderr + worker.output()).toBe(0);
      const final = JSON.parse(done.stdout);
      expect(final.status).toBe('completed');

      const shown = await statusOf(t, sessionId);
      const agents = shown.agents as Array<Record<string, any>>;
      expect(agents.map((agent) => [agent.agentId, agent.status])).toEqual([
        ['agent-1', 'completed'],
        ['agent-2', 'budget_exhausted'],
      ]);
      expect(agents[0].costUsd).toBeCloseTo(0.01, 9);
      expect(agents[0].summary).toBe('a.txt written');
      // Child B: one step ($0.005), then at its $0.012 share a call reserving $0.01 would not fit: the hand-back ($0.005).
      expect(agents[1].costUsd).toBeCloseTo(0.01, 9);
      expect(agents[1].summary).toContain('HANDED-BACK');
      expect(agents[1].share.maxCostUsd).toBe(0.012);
      expect(handBackTools).toEqual([[]]);
      // The parent's two steps ($0.01) plus its children's.
      expect(shown.costUsd).toBeCloseTo(0.03, 9);

      // status and stats show each child's cost; the transcript nests the children's.
      const text = await runCli(['status', sessionId], t.env);
      expect(text.stdout).toMatch(/agent-2\s+budget_exhausted · \$0\.0100/);
      const stats = JSON.parse((await runCli(['stats', sessionId, '--json'], t.env)).stdout);
      expect(stats.agents.map((agent: { costUsd: number }) => agent.costUsd)).toEqual([
        agents[0].costUsd,
        agents[1].costUsd,
      ]);
      const transcript = await runCli(['transcript', sessionId, '--format', 'jsonl'], t.env);
      const lines = transcript.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { agent?: string; role: string });
      expect(lines.some((line) => line.agent === 'agent-1' && line.role === 'assistant')).toBe(true);
      expect(lines.some((line) => line.agent === 'agent-2' && line.role === 'assistant')).toBe(true);
      const markdown = await runCli(['transcript', sessionId], t.env);
      expect(markdown.stdout).toContain('## Sub-agent agent-2');
      expect(markdown.stdout).toContain('HANDED-BACK');

      const stream = await runCli(
        ['watch', sessionId, '--output-format', 'stream-json', '--from-start'],
        t.env,
      );
      const events = stream.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; text?: string; total_cost_usd?: number });
      expect(events.filter((event) => event.text?.startsWith('sub-agent agent-'))).toHaveLength(4);
      expect(events.at(-1)?.total_cost_usd).toBeCloseTo(0.03, 9);
      const listed = await runCli(['tasks', sessionId], t.env);
      expect(listed.stdout).toContain('task-1 is held by sub-agent agent-1');
      expect(listed.stdout).toContain('task-2 is held by sub-agent agent-2');

      // The children are Temporal child workflows of the parent.
      for (const agent of agents) {
        const described = await client.workflow.getHandle(agent.workflowId).describe();
        expect(described.parentExecution?.workflowId).toBe(workflowId);
      }
      expect(agents[0].workflowId).toBe(workflowIdOf(agents[0].sessionId));

      // The claims went through the parent's queue: the graph shows who holds which task.
      const store = await testStore(t.databaseUrl);
      try {
        const events = await store.listEvents(sessionId);
        const spawned = events.filter(
          (event) => event.kind === 'agent' && (event.data as { at?: string }).at === 'spawned',
        );
        expect(spawned).toHaveLength(2);
        const updates = events.filter((event) => event.kind === 'task-update');
        const last = updates.at(-1)!.data as { tasks: Array<{ id: string }> };
        const byId = Object.fromEntries(last.tasks.map((task) => [task.id, task]));
        expect(byId['task-1']).toMatchObject({ status: 'completed', agent: 'agent-1' });
        expect(byId['task-2']).toMatchObject({ status: 'in_progress', agent: 'agent-2' });
      } finally {
        await store.close();
      }
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });

  it('pauses and cancels a running child with its parent', async () => {
    const t = goalTestEnv('agents-cancel', { OPENAI_API_KEY: 'sk-test' });
    const held = gate();
    const reached = gate();
    byObjective(server, {
      'PARENT-CANCEL': [{ toolCalls: [{ name: 'agent', args: { prompt: 'CHILD-HELD: wait here' } }] }],
      'CHILD-HELD': [
        async () => {
          reached.open();
          await held.opened;
          return { text: 'too late' };
        },
      ],
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, 'PARENT-CANCEL: start one child');
      await reached.opened;
      const childId = `${sessionId}-agent1`;
      const child = client.workflow.getHandle(workflowIdOf(childId));
      expect((await child.describe()).status.name).toBe('RUNNING');
      // Pausing the parent pauses the child: its model call in flight is stopped.
      const paused = await runCli(['pause', sessionId], t.env);
      expect(paused.code, paused.stderr).toBe(0);
      await waitFor(
        'the child to pause',
        async () => (await statusOf(t, childId)).status === 'paused',
        90_000,
      );
      const cancelled = await runCli(['cancel', sessionId], t.env);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      await waitFor(
        'the child to be cancelled',
        async () => (await child.describe()).status.name === 'CANCELLED',
        90_000,
      );
      await waitFor(
        'the parent to be cancelled',
        async () => (await statusOf(t, sessionId)).status === 'cancelled',
        90_000,
      );
      expect((await statusOf(t, childId)).status).toBe('cancelled');
    } finally {
      held.open();
      await killAndWait(worker, 'SIGTERM');
    }
  });

  it('runs a child with isolation "worktree" on a git worktree of the workspace', async () => {
    const t = goalTestEnv('agents-worktree', { OPENAI_API_KEY: 'sk-test' });
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', t.workspace, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
    git('init', '-q');
    fs.writeFileSync(path.join(t.workspace, 'README'), 'base\n');
    git('add', 'README');
    git('commit', '-q', '-m', 'base');
    byObjective(server, {
      'PARENT-TREE': [
        {
          toolCalls: [{ name: 'agent', args: { prompt: 'CHILD-TREE: write c.txt', isolation: 'worktree' } }],
        },
        { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] },
      ],
      'CHILD-TREE': [
        { toolCalls: [{ name: 'file-write', args: { path: 'c.txt', content: 'from the child\n' } }] },
        { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'c.txt written' } }] },
      ],
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, 'PARENT-TREE: isolate the child');
      const done = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
      expect(done.code, done.stdout + done.stderr).toBe(0);
      const child = await statusOf(t, `${sessionId}-agent1`);
      expect(child.status).toBe('completed');
      expect(child.workspace).not.toBe(t.workspace);
      expect(fs.readFileSync(path.join(child.workspace, 'c.txt'), 'utf8')).toBe('from the child\n');
      expect(fs.readFileSync(path.join(child.workspace, 'README'), 'utf8')).toBe('base\n');
      // The parent's workspace is untouched.
      expect(fs.existsSync(path.join(t.workspace, 'c.txt'))).toBe(false);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
