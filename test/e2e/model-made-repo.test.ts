/**
 * Issue 24 item 2: a repository the model makes during a goal is never snapshotted, also after
 * continue-as-new (forced early through the dev server's dynamic config), because the repository the
 * goal started in is kept in the workflow state. Two goals: one in a folder that was no repository
 * (the model runs `git init` there), one in a folder of the user's repository (the model makes a
 * repository of its own in it: refused once with a notice, never tried again).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userTextOf } from '../../core/messages';
import { workflowIdOf } from '../../core/workflow-names';
import type { SessionStore } from '../../store/types';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { fetchHistory } from '../support/history';
import { startTestTemporalServer, type TestTemporalServer } from '../support/temporal-server';

const BUNDLE = path.resolve(__dirname, '../../dist/workflow-bundle.js');
/** History events after which the dev server suggests continue-as-new: a few steps. */
const SUGGEST_AFTER_EVENTS = 40;
/** Steps after the model made its repository: enough for at least one continue-as-new. */
const LATER_STEPS = 12;

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'core.fsmonitor=', '-c', 'core.hooksPath=/dev/null', '-C', cwd, ...args],
    {
      encoding: 'utf8',
    },
  ).trim();
}

const bash = (command: string) => ({ toolCalls: [{ name: 'bash', args: { command } }] });

/** The turns after the model made its repository: bash edits and turn ends, then finish. */
function laterTurns(): unknown[] {
  const turns: unknown[] = [];
  for (let i = 0; i < LATER_STEPS; i++) {
    turns.push(i % 3 === 2 ? { text: `turn ${i} done` } : bash(`echo ${i} >> count.txt`));
  }
  turns.push({ toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] });
  return turns;
}

describe('a repository the model makes', () => {
  let server: TestTemporalServer;
  let store: SessionStore | undefined;
  beforeAll(async () => {
    server = await startTestTemporalServer({
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': SUGGEST_AFTER_EVENTS },
    });
  });
  afterAll(async () => {
    await store?.close();
    await server?.stop();
  });

  /** Runs a goal to its end; its session id, once the last run is shown to be a continuation. */
  async function runToEnd(
    t: ReturnType<typeof goalTestEnv>,
    workspace: string,
    turns: unknown[],
  ): Promise<string> {
    const model = scriptedModel(t.home, turns);
    const ran = await runCli(
      ['run', 'make a repository', '--workspace', workspace, '--model', model, '--json'],
      t.env,
      240_000,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const final = JSON.parse(ran.stdout);
    expect(final).toMatchObject({ status: 'completed', steps: turns.length });
    const lastRun = await fetchHistory(server.address, final.workflowId);
    expect(lastRun[0].event.workflowExecutionStartedEventAttributes?.continuedExecutionRunId).toBeTruthy();
    return final.sessionId;
  }

  /** Replays each run of a workflow, newest to first, against the built bundle. */
  async function replayEveryRun(workflowId: string): Promise<void> {
    const connection = await Connection.connect({ address: server.address });
    try {
      const client = new Client({ connection });
      let runId: string | undefined;
      let runs = 0;
      do {
        const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
        await Worker.runReplayHistory({ workflowBundle: { codePath: BUNDLE } }, history, workflowId);
        runs += 1;
        runId =
          history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
      } while (runId);
      expect(runs).toBeGreaterThan(1);
    } finally {
      await connection.close();
    }
  }

  async function notices(databaseUrl: string, sessionId: string): Promise<string[]> {
    store ??= await testStore(databaseUrl);
    return (await store.listMessages(sessionId))
      .map(({ message }) => userTextOf(message))
      .filter((text) => text.startsWith('[goalrun]'));
  }

  it('is never snapshotted when the workspace was no repository, across continue-as-new', async () => {
    const t = goalTestEnv('model-repo', { TEMPORAL_ADDRESS: server.address });
    const turns = [
      bash(
        'git init -q && git -c user.name=m -c user.email=m@m commit -q --allow-empty -m mine && echo made',
      ),
      ...laterTurns(),
    ];
    await runToEnd(t, t.workspace, turns);
    expect(git(t.workspace, 'log', '--format=%s')).toBe('mine');
    expect(git(t.workspace, 'for-each-ref', 'refs/goalrun/')).toBe('');
  }, 300_000);

  it("is refused once inside the user's repository, and never tried again after continue-as-new", async () => {
    const t = goalTestEnv('nested-repo', { TEMPORAL_ADDRESS: server.address });
    git(t.workspace, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(t.workspace, 'README'), 'user\n');
    git(t.workspace, 'add', '.');
    git(t.workspace, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'user');
    const app = path.join(t.workspace, 'app');
    fs.mkdirSync(app);
    const turns = [
      { toolCalls: [{ name: 'file-write', args: { path: 'a.txt', content: 'a\n' } }] },
      bash('git init -q && echo nested'),
      ...laterTurns(),
    ];
    const sessionId = await runToEnd(t, app, turns);
    expect(git(t.workspace, 'for-each-ref', '--format=%(refname)', 'refs/goalrun/')).toBe(
      `refs/goalrun/${sessionId}/1`,
    );
    expect(git(app, 'for-each-ref', 'refs/goalrun/')).toBe('');
    const stopped = (await notices(t.databaseUrl, sessionId)).filter((text) =>
      text.includes('workspace snapshots stopped'),
    );
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatch(/now in the repository at .*app, not in the one the goal started in/);
    // Every run of it replays on this build: the recorded repository, the refusal and its notice.
    await replayEveryRun(workflowIdOf(sessionId));
  }, 300_000);
});
