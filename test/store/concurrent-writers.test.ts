/**
 * Several OS processes write to one session of the embedded store at once, the way a worker, `watch`
 * and `status` share it: migrations from processes starting together, appendMessage with colliding
 * keys, and read-modify-write transactions under an advisory lock, some rolled back. Nothing may be
 * lost or duplicated, and an open transaction of one client is invisible to, and does not block, others.
 */
import { Client } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureEmbeddedStore, stopEmbeddedStore } from '../../store/embedded-server';
import { MIGRATIONS } from '../../store/migrations';
import { runStoreChild } from './store-processes';
import { createTempDir } from './test-databases';

const TEST_TIMEOUT_MS = 180_000;
const SESSION_ID = 'abcdef012345-20261201T000000000Z';
/** Every third transaction of a writer rolls back after its update. */
const ROLLBACK_EVERY = 3;

interface WriterResult {
  started: boolean;
  serverPid: number;
  migrated: number[];
  /** key -> seq this writer got back from appendMessage. */
  seqs: Record<string, number>;
  created: number;
  commits: number;
}

/**
 * One writer process: opens the store (starting the server and migrating if it is first), appends every
 * key in its own shuffled order, then runs `rounds` counter transactions under pg_advisory_xact_lock.
 */
const WRITER = `
  const { openStore } = require(store + '/open.js');
  const { ensureEmbeddedStore } = require(store + '/embedded-server.js');
  const { createPgClient } = require(store + '/sql.js');
  const { migrate } = require(store + '/migrations.js');
  const said = [];
  const server = await ensureEmbeddedStore(home, { log: (line) => said.push(line) });
  const sql = createPgClient(server.url);
  const migrated = await migrate(sql);
  const sessions = await openStore({ home, log: (line) => said.push(line) });
  await sessions.createSession({ id: arg.session, projectDir: '/p', projectHash: 'abcdef012345',
    objective: 'concurrent writers', model: 'scripted:x', workflowId: 'goal-concurrent' });
  await sql.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(1)');
    await tx.exec('CREATE TABLE IF NOT EXISTS counter (v int NOT NULL); CREATE TABLE IF NOT EXISTS ledger (writer int, round int)');
    const { rows } = await tx.query('SELECT count(*)::int AS n FROM counter');
    if (rows[0].n === 0) await tx.query('INSERT INTO counter VALUES (0)');
  });
  const keys = Array.from({ length: arg.keys }, (_, i) => 'k' + i).sort(() => Math.random() - 0.5);
  const seqs = {};
  let created = 0;
  await Promise.all([0, 1].map(async (lane) => {
    for (const key of keys.filter((_, i) => i % 2 === lane)) {
      const result = await sessions.appendMessage(arg.session, key,
        { role: 'user', content: [{ type: 'text', text: key + ' from ' + arg.writer }] });
      seqs[key] = result.seq;
      if (result.created) created++;
    }
  }));
  let commits = 0;
  for (let round = 0; round < arg.rounds; round++) {
    try {
      await sql.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock(42)');
        const { rows } = await tx.query('SELECT v FROM counter');
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
        await tx.query('UPDATE counter SET v = $1', [rows[0].v + 1]);
        await tx.query('INSERT INTO ledger VALUES ($1, $2)', [arg.writer, round]);
        if (round % ${ROLLBACK_EVERY} === ${ROLLBACK_EVERY - 1}) throw new Error('roll back');
      });
      commits++;
    } catch (error) {
      if (error.message !== 'roll back') throw error;
    }
  }
  await sessions.close();
  await sql.close();
  done({ started: server.started, serverPid: server.pid, migrated, seqs, created, commits });`;

describe('concurrent writers on the embedded store', () => {
  const temps: Array<ReturnType<typeof createTempDir>> = [];

  afterAll(async () => {
    for (const temp of temps) {
      await stopEmbeddedStore(temp.dir);
      temp.remove();
    }
  }, TEST_TIMEOUT_MS);

  it.each([
    { writers: 2, keys: 30, rounds: 12 },
    { writers: 4, keys: 80, rounds: 20 },
  ])(
    '$writers processes, $keys colliding keys, $rounds locked transactions each: nothing lost, nothing twice',
    async ({ writers, keys, rounds }) => {
      const temp = createTempDir('goalrun-writers-test');
      temps.push(temp);
      const runs = await Promise.all(
        Array.from({ length: writers }, (_, writer) =>
          runStoreChild<WriterResult>(WRITER, temp.dir, { session: SESSION_ID, keys, rounds, writer }),
        ),
      );
      for (const run of runs) expect(run.code, run.stderr).toBe(0);
      const results = runs.map((run) => run.result);

      // One server, started by one of them; each migration applied by exactly one process.
      expect(new Set(results.map((result) => result.serverPid)).size).toBe(1);
      expect(results.filter((result) => result.started)).toHaveLength(1);
      expect(results.flatMap((result) => result.migrated).sort((a, b) => a - b)).toEqual(
        MIGRATIONS.map((migration) => migration.id),
      );

      const { url } = await ensureEmbeddedStore(temp.dir, { log: () => {} });
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        // appendMessage: one row per key; every writer got the same seq for a key; one creator per key.
        const { rows } = await client.query<{ key: string; seq: string }>(
          'SELECT key, seq FROM messages WHERE session_id = $1 ORDER BY seq',
          [SESSION_ID],
        );
        expect(rows).toHaveLength(keys);
        const stored = Object.fromEntries(rows.map((row) => [row.key, Number(row.seq)]));
        for (const result of results) expect(result.seqs).toEqual(stored);
        expect(results.reduce((sum, result) => sum + result.created, 0)).toBe(keys);

        // Locked read-modify-write: no lost update, no rolled-back work visible.
        const commits = results.reduce((sum, result) => sum + result.commits, 0);
        const perWriter = rounds - Math.floor(rounds / ROLLBACK_EVERY);
        expect(commits).toBe(writers * perWriter);
        const counter = await client.query<{ v: number }>('SELECT v FROM counter');
        expect(counter.rows).toEqual([{ v: commits }]);
        const ledger = await client.query<{ n: number; rolled_back: number }>(
          `SELECT count(*)::int AS n, count(*) FILTER (WHERE round % ${ROLLBACK_EVERY} = ${ROLLBACK_EVERY - 1})::int AS rolled_back FROM ledger`,
        );
        expect(ledger.rows).toEqual([{ n: commits, rolled_back: 0 }]);
      } finally {
        await client.end();
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "keeps one client's open transaction invisible to another, without blocking it",
    async () => {
      const temp = createTempDir('goalrun-isolation-test');
      temps.push(temp);
      const { url } = await ensureEmbeddedStore(temp.dir, { log: () => {} });
      const [a, b] = [new Client({ connectionString: url }), new Client({ connectionString: url })];
      await Promise.all([a.connect(), b.connect()]);
      try {
        await a.query('CREATE TABLE seen (tag text)');
        await a.query('BEGIN');
        await a.query("INSERT INTO seen VALUES ('uncommitted')");
        await a.query("SET LOCAL TimeZone = 'Pacific/Chatham'");
        expect((await a.query('SELECT pg_try_advisory_xact_lock(7) AS got')).rows).toEqual([{ got: true }]);
        // b answers while a's transaction is open (a blocked read would time the test out here).
        expect((await b.query('SELECT count(*)::int AS n FROM seen')).rows).toEqual([{ n: 0 }]);
        expect((await b.query('SELECT pg_try_advisory_xact_lock(7) AS got')).rows).toEqual([{ got: false }]);
        expect((await b.query('SHOW TimeZone')).rows[0].TimeZone).not.toBe('Pacific/Chatham');
        await a.query('COMMIT');
        expect((await b.query('SELECT count(*)::int AS n FROM seen')).rows).toEqual([{ n: 1 }]);
        expect((await b.query('SELECT pg_try_advisory_xact_lock(7) AS got')).rows).toEqual([{ got: true }]);
      } finally {
        await Promise.all([a.end(), b.end()]);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
