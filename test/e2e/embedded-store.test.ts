/**
 * Issue 7, acceptance 1: on the embedded defaults (no DATABASE_URL), `start`, then `worker` and `watch`
 * as separate processes, with `list` and `status` polled meanwhile: the goal completes and every command
 * exits 0. All of them share the one embedded store server, which outlives them until it is stopped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { embeddedStorePaths } from '../../store/embedded-files';
import { embeddedStoreStatus, stopEmbeddedStore } from '../../store/embedded-server';
import { openStore } from '../../store/open';
import { postmastersOf } from '../store/store-processes';
import {
  type CliResult,
  cliEnv,
  killAndWait,
  runCli,
  scriptedModel,
  spawnCli,
  tempDir,
} from '../support/cli';

const turns = [
  {
    text: 'Writing.',
    toolCalls: [{ name: 'file-write', args: { path: 'out.txt', content: 'shared store\n' } }],
  },
  { toolCalls: [{ name: 'bash', args: { command: 'sleep 1 && cat out.txt' } }] },
  { toolCalls: [{ name: 'file-read', args: { path: 'out.txt' } }] },
  { toolCalls: [{ name: 'bash', args: { command: 'sleep 1 && wc -c out.txt' } }] },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'wrote and read out.txt' } }] },
];

/** A CLI run that ended, for a failure message that shows what it said. */
function describeRun(args: string[], result: CliResult): string {
  return `goalrun ${args.join(' ')} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

describe('the embedded store serves several goalrun processes at once', () => {
  const homes: string[] = [];
  const workspaces: string[] = [];

  afterAll(async () => {
    for (const home of homes) await stopEmbeddedStore(home);
    for (const home of homes) expect(postmastersOf(embeddedStorePaths(home).dataDir)).toEqual([]);
    for (const dir of [...homes, ...workspaces]) fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The defaults as a new user has them: no DATABASE_URL and no task queue, so the queue is the one
   * derived from this home's own embedded store (and no other test's worker can take its goals).
   */
  function embeddedEnv(name: string): { env: NodeJS.ProcessEnv; home: string } {
    const home = tempDir(`${name}-home`);
    homes.push(home);
    const env = cliEnv({
      GOALRUN_HOME: home,
      DATABASE_URL: undefined,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      GOALRUN_TASK_QUEUE: undefined,
    });
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.GOALRUN_TASK_QUEUE).toBeUndefined();
    return { env, home };
  }

  /** The id of the embedded store of a home (its server is running by then). */
  async function storeIdOf(home: string): Promise<string> {
    const store = await openStore({ home, log: () => {} });
    try {
      return await store.storeId();
    } finally {
      await store.close();
    }
  }

  it('start, then worker and watch in separate processes, list and status polled meanwhile: all exit 0', async () => {
    const { env, home } = embeddedEnv('embedded-e2e');
    const workspace = tempDir('embedded-e2e-ws');
    workspaces.push(workspace);
    const model = scriptedModel(home, turns);

    const started = await runCli(
      ['start', 'write out.txt and read it back', '--workspace', workspace, '--model', model, '--json'],
      env,
    );
    expect(started.code, describeRun(['start'], started)).toBe(0);
    const { sessionId, taskQueue } = JSON.parse(started.stdout) as { sessionId: string; taskQueue: string };
    // The queue derived from this store's identity (worker/settings.ts: goalrun-<first 12 hex>).
    const storeId = await storeIdOf(home);
    expect(storeId).toMatch(/^[0-9a-f]{32}$/);
    expect(taskQueue).toBe(`goalrun-${storeId.slice(0, 12)}`);

    const worker = spawnCli(['worker'], env);
    const workerExit = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    const watch = spawnCli(['watch', sessionId], env);
    const watchExit = new Promise<number | null>((resolve) => watch.once('exit', (code) => resolve(code)));
    try {
      // Poll list and status while the goal runs, until watch ends; every poll must exit 0.
      const polls: Array<{ args: string[]; result: CliResult }> = [];
      let watchCode: number | null | undefined;
      void watchExit.then((code) => {
        watchCode = code;
      });
      let sawSession = false;
      while (watchCode === undefined) {
        const listArgs = ['list', '--json'];
        const listed = await runCli(listArgs, env);
        polls.push({ args: listArgs, result: listed });
        // status needs the session row, which the worker writes at the goal's first step.
        sawSession ||= listed.code === 0 && listed.stdout.includes(sessionId);
        if (sawSession) {
          const statusArgs = ['status', sessionId, '--json'];
          polls.push({ args: statusArgs, result: await runCli(statusArgs, env) });
        }
      }
      for (const { args, result } of polls) expect(result.code, describeRun(args, result)).toBe(0);
      expect(polls.filter((poll) => poll.args[0] === 'status').length).toBeGreaterThan(0);
      expect(watchCode, watch.output()).toBe(0);
      expect(watch.output()).toMatch(/completed/);

      const status = await runCli(['status', sessionId, '--json'], env);
      expect(status.code, describeRun(['status'], status)).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ status: 'completed', steps: turns.length });
      expect(fs.readFileSync(path.join(workspace, 'out.txt'), 'utf8')).toBe('shared store\n');
      expect(worker.output()).toContain(`polling task queue ${taskQueue} (derived from the store)`);

      // One store server served them all.
      const { pid } = embeddedStoreStatus(home);
      expect(postmastersOf(embeddedStorePaths(home).dataDir)).toEqual([pid]);
    } finally {
      await killAndWait(worker, 'SIGTERM');
      await killAndWait(watch);
      expect(await workerExit, worker.output()).toBe(0);
    }
    // The server outlives every goalrun process until it is stopped.
    expect(embeddedStoreStatus(home).running).toBe(true);
  });

  it('two goalrun processes opening a new store at once start exactly one store server', async () => {
    const { env, home } = embeddedEnv('embedded-two');
    const runs = await Promise.all([runCli(['list', '--json'], env), runCli(['list', '--json'], env)]);
    for (const run of runs) {
      expect(run.code, describeRun(['list', '--json'], run)).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual([]);
    }
    const said = runs.map((run) => run.stderr).join('');
    expect(said.match(/started the embedded PostgreSQL store/g)).toHaveLength(1);
    const { running, pid } = embeddedStoreStatus(home);
    expect(running).toBe(true);
    expect(postmastersOf(embeddedStorePaths(home).dataDir)).toEqual([pid]);
  });
});
