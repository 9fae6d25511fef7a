/**
 * PostgreSQL restarts between a command and the record of its result: the tool activity waits the
 * outage out inside its attempt (StoreUnavailable, with backoff and heartbeats), so the command runs
 * once and the model is told its real result, never that it "could not be run".
 * The database is a private server of this test: the suite's shared one must stay up.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, scriptedModel, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { type PrivatePostgres, startPrivatePostgres } from '../support/private-postgres';

/** The command runs this long after its marker, so the test can stop the database meanwhile. */
const COMMAND_SECONDS = 4;
/** How long the database stays down after the command has finished. */
const OUTAGE_AFTER_COMMAND_MS = 6_000;

const turns = [
  {
    toolCalls: [
      {
        name: 'bash',
        args: { command: `echo ran >> runs.txt; sleep ${COMMAND_SECONDS}; echo finished-output` },
      },
    ],
  },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'ran once' } }] },
];

describe('a store outage between a command and its record', () => {
  let pg: PrivatePostgres;
  beforeAll(async () => {
    pg = await startPrivatePostgres();
  });
  afterAll(() => pg?.destroy());

  it('records the result inside the same attempt once the store is back; the command runs once', async () => {
    const t = goalTestEnv('store-outage', { DATABASE_URL: pg.url });
    const model = scriptedModel(t.home, turns);
    const worker = spawnCli(['worker'], t.env);
    try {
      const started = await runCli(
        ['start', 'run a command through an outage', '--workspace', t.workspace, '--model', model, '--json'],
        t.env,
      );
      expect(started.code, started.stderr).toBe(0);
      const { sessionId } = JSON.parse(started.stdout);
      const runs = path.join(t.workspace, 'runs.txt');
      await waitFor('the command to start', () => fs.existsSync(runs), 90_000, 100);
      pg.stop();
      // The command finishes and its record fails while the server is down.
      await new Promise((resolve) => setTimeout(resolve, COMMAND_SECONDS * 1000 + OUTAGE_AFTER_COMMAND_MS));
      pg.start();
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 150_000);
      expect(watched.code, watched.stderr + worker.output()).toBe(0);
      expect(JSON.parse(watched.stdout).status).toBe('completed');
      expect(fs.readFileSync(runs, 'utf8')).toBe('ran\n');

      const store = await testStore(pg.url);
      const messages = await store.listMessages(sessionId);
      await store.close();
      const results = messages.filter((m) => m.message.role === 'tool').map((m) => JSON.stringify(m.message));
      expect(results).toHaveLength(2);
      expect(results[0]).toContain('finished-output');
      expect(results[0]).not.toContain('could not be run');
      expect(results[0]).not.toContain('earlier attempt');
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
