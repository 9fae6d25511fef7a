/**
 * Issue 7, acceptance 4: the default task queue is derived from the store's identity, so two stores
 * never share workers. Two `run`s at once on two PostgreSQL databases: neither touches the other's
 * goal. And when `run` stops following, its in-process worker drains what it was running, also for
 * other goals of its store that it had picked up, instead of leaving them mid-step.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskQueueForStore } from '../../worker/settings';
import { createTestDatabase, type TestDatabase } from '../store/test-databases';
import { killAndWait, runCli, scriptedModel, spawnCli, tempDir, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';

/** An environment on its own database, with the task queue left to the store. */
function storeEnv(name: string, database: TestDatabase) {
  const t = goalTestEnv(name, { DATABASE_URL: database.url, GOALRUN_TASK_QUEUE: undefined });
  return { ...t, databaseUrl: database.url };
}

const slowTurns = (file: string) => [
  { toolCalls: [{ name: 'bash', args: { command: `sleep 2; echo ${file} > ${file}` } }] },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: `wrote ${file}` } }] },
];

describe('two stores', () => {
  const databases: TestDatabase[] = [];
  beforeAll(async () => {
    databases.push(await createTestDatabase(), await createTestDatabase());
  });
  afterAll(async () => {
    await Promise.all(databases.map((database) => database.drop()));
  });

  it('get task queues of their own, and two runs at once each keep to their own goal', async () => {
    const [a, b] = [storeEnv('storea', databases[0]), storeEnv('storeb', databases[1])];
    const [runA, runB] = await Promise.all([
      runCli(
        [
          'run',
          'goal of store a',
          '--workspace',
          a.workspace,
          '--model',
          scriptedModel(a.home, slowTurns('a.txt')),
          '--json',
        ],
        a.env,
      ),
      runCli(
        [
          'run',
          'goal of store b',
          '--workspace',
          b.workspace,
          '--model',
          scriptedModel(b.home, slowTurns('b.txt')),
          '--json',
        ],
        b.env,
      ),
    ]);
    expect(runA.code, runA.stderr).toBe(0);
    expect(runB.code, runB.stderr).toBe(0);
    const [goalA, goalB] = [JSON.parse(runA.stdout), JSON.parse(runB.stdout)];
    expect(goalA).toMatchObject({ status: 'completed', steps: 2 });
    expect(goalB).toMatchObject({ status: 'completed', steps: 2 });
    expect(fs.readdirSync(a.workspace)).toEqual(['a.txt']);
    expect(fs.readdirSync(b.workspace)).toEqual(['b.txt']);

    const [storeA, storeB] = [await testStore(a.databaseUrl), await testStore(b.databaseUrl)];
    try {
      const [idA, idB] = [await storeA.storeId(), await storeB.storeId()];
      expect(idA).toMatch(/^[0-9a-f]{32}$/);
      expect(idA).not.toBe(idB);
      expect((await storeA.listSessions()).map((row) => row.id)).toEqual([goalA.sessionId]);
      expect((await storeB.listSessions()).map((row) => row.id)).toEqual([goalB.sessionId]);
      // Each store's worker polls the queue derived from its id; an override still wins.
      const status = JSON.parse((await runCli(['status', goalA.sessionId, '--json'], a.env)).stdout);
      expect(status.sessionId).toBe(goalA.sessionId);
      const worker = spawnCli(['worker'], a.env);
      try {
        await waitFor('the worker to say its queue', () => /polling task queue \S+/.test(worker.output()));
        expect(worker.output()).toContain(
          `polling task queue ${taskQueueForStore(idA)} (derived from the store)`,
        );
        expect(taskQueueForStore(idA)).toBe(`goalrun-${idA.slice(0, 12)}`);
      } finally {
        await killAndWait(worker, 'SIGTERM');
      }
      const overridden = spawnCli(['worker', '--task-queue', 'my-own-queue'], a.env);
      try {
        await waitFor('the overridden queue', () =>
          overridden.output().includes('polling task queue my-own-queue (as configured)'),
        );
      } finally {
        await killAndWait(overridden, 'SIGTERM');
      }
    } finally {
      await storeA.close();
      await storeB.close();
    }
  });

  it("stops run's worker gracefully: its goal's running command finishes first, and no other goal runs there", async () => {
    const database = databases[0];
    const t = storeEnv('drain', database);
    const otherWorkspace = tempDir('drain-other');
    // Another goal of the same store, started with no worker: a foreground run must leave it alone.
    const other = await runCli(
      [
        'start',
        'a goal that run must not pick up',
        '--workspace',
        otherWorkspace,
        '--model',
        scriptedModel(t.home, [
          { toolCalls: [{ name: 'bash', args: { command: 'echo other > other.txt' } }] },
          { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'finished by a worker' } }] },
        ]),
        '--json',
      ],
      t.env,
    );
    expect(other.code, other.stderr).toBe(0);
    const otherId = JSON.parse(other.stdout).sessionId as string;
    const marker = path.join(t.workspace, 'drained.txt');
    const run = spawnCli(
      [
        'run',
        'the followed goal',
        '--workspace',
        t.workspace,
        '--model',
        scriptedModel(t.home, [
          {
            toolCalls: [
              {
                name: 'bash',
                // Runs until the test releases it (or 10 minutes pass): still running when run stops.
                args: {
                  command:
                    'echo started > started.txt; for i in $(seq 1 3000); do [ -e release ] && break; sleep 0.2; done; echo done > drained.txt',
                },
              },
            ],
          },
          { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'drained and finished' } }] },
        ]),
      ],
      t.env,
    );
    const exited = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
    await waitFor(
      "run's goal to start its command",
      () => fs.existsSync(path.join(t.workspace, 'started.txt')),
      60_000,
    );
    run.kill('SIGINT');
    // run waits for its worker's running call, however long the machine took to get here; then the
    // call may end.
    await waitFor('run to wait for its running call', () =>
      /stopping the in-process worker: waiting up to 30s for \d+ running calls?/.test(run.output()),
    );
    fs.writeFileSync(path.join(t.workspace, 'release'), '');
    expect(await exited).toBe(130);
    // The worker drained: the command ran to its end and its result is in the store before run exited.
    expect(fs.readFileSync(marker, 'utf8')).toBe('done\n');
    expect(run.output()).toMatch(/stopping the in-process worker: waiting up to 30s for \d+ running calls?/);
    expect(fs.existsSync(path.join(otherWorkspace, 'other.txt'))).toBe(false);
    const store = await testStore(database.url);
    try {
      const sessionId = (await store.listSessions()).find((row) => row.objective === 'the followed goal')?.id;
      if (!sessionId) throw new Error(`run's session is not in the store:\n${run.output()}`);
      const results = (await store.listMessages(sessionId)).filter((entry) => entry.message.role === 'tool');
      expect(results).toHaveLength(1);
      expect(JSON.stringify(results)).toContain('[exit code 0]');
      expect(JSON.stringify(results)).not.toContain('not run to completion');
      // A worker of the store finishes both goals: run's from where it was, the other from its start.
      const worker = spawnCli(['worker'], t.env);
      try {
        for (const id of [sessionId, otherId]) {
          const watched = await runCli(['watch', id, '--json'], t.env);
          expect(watched.code, watched.stderr).toBe(0);
          expect(JSON.parse(watched.stdout)).toMatchObject({ status: 'completed', steps: 2 });
        }
        expect(fs.readFileSync(path.join(otherWorkspace, 'other.txt'), 'utf8')).toBe('other\n');
      } finally {
        await killAndWait(worker, 'SIGTERM');
      }
    } finally {
      await store.close();
    }
  });
});
