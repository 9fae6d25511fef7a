/**
 * Issue 30: a goal's end closes it on its tool host (killSessionJobs: its jobs, servers and private
 * /tmp) only when the host holds something of it. A goal that only read files in a plain folder left
 * nothing there and ends without that activity (its workflow task too); a goal that ran a command
 * has a private /tmp, and its end still removes it. Through the built CLI, on the suite's dev server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { fetchHistory } from '../support/history';

/** Where the sandbox keeps a session's private /tmp on this host (activities/sandbox/host.ts). */
function sandboxDirOf(sessionId: string): string {
  return path.join(os.tmpdir(), `goalrun-sandbox-${process.getuid?.() ?? 0}`, sessionId);
}

type Turn = { toolCalls: Array<{ name: string; args: Record<string, unknown> }> };

const FINISH: Turn = { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };

/** Runs a goal to its end in the foreground; its session, and the activities its history scheduled. */
async function runGoal(name: string, turns: Turn[]): Promise<{ sessionId: string; activities: string[] }> {
  const t = goalTestEnv(name);
  fs.writeFileSync(path.join(t.workspace, 'a.txt'), 'alpha\n');
  const model = scriptedModel(t.home, turns);
  const result = await runCli(
    ['run', 'read and finish', '--workspace', t.workspace, '--model', model, '--json'],
    t.env,
    180_000,
  );
  expect(result.code, result.stderr).toBe(0);
  const status = JSON.parse(result.stdout);
  expect(status.status).toBe('completed');
  const events = await fetchHistory(t.temporalAddress, status.workflowId);
  const activities = events
    .map(({ event }) => event.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter((name): name is string => typeof name === 'string');
  return { sessionId: status.sessionId, activities };
}

describe('the close on the tool host at the end of a goal', () => {
  it('is left out when the goal only read files in a plain folder', async () => {
    const read: Turn = { toolCalls: [{ name: 'file-read', args: { path: 'a.txt' } }] };
    const { sessionId, activities } = await runGoal('close-reads', [read, read, FINISH]);
    expect(activities).toContain('gatherWorkspaceContext');
    expect(activities.filter((name) => name === 'runTool')).toHaveLength(2);
    expect(activities).not.toContain('killSessionJobs');
    expect(fs.existsSync(sandboxDirOf(sessionId))).toBe(false);
  }, 240_000);

  it('still removes the private /tmp of a goal that ran a command', async () => {
    const write: Turn = { toolCalls: [{ name: 'bash', args: { command: 'echo kept > /tmp/marker.txt' } }] };
    const read: Turn = { toolCalls: [{ name: 'file-read', args: { path: 'a.txt' } }] };
    const { sessionId, activities } = await runGoal('close-bash', [read, write, read, FINISH]);
    expect(activities.filter((name) => name === 'killSessionJobs')).toHaveLength(1);
    expect(fs.existsSync(sandboxDirOf(sessionId))).toBe(false);
  }, 240_000);
});
