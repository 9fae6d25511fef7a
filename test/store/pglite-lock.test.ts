import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPgliteClient, PGLITE_LOCK_FILE, type SqlClient } from '../../store/sql';
import { createTempDir } from './test-databases';

/** Opening PGlite takes seconds (it boots PostgreSQL in WebAssembly). */
const OPEN_TIMEOUT_MS = 60_000;

/** The pid of a process that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  if (child.pid === undefined) throw new Error('could not start a child process');
  return child.pid;
}

describe('PGlite lock file', () => {
  const cleanups: Array<() => Promise<void> | void> = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  }, OPEN_TIMEOUT_MS);

  function tempDir(): string {
    const temp = createTempDir('goalrun-lock-test');
    cleanups.push(temp.remove);
    return temp.dir;
  }

  async function open(dir: string): Promise<SqlClient> {
    const client = await createPgliteClient(dir);
    cleanups.push(() => client.close());
    return client;
  }

  it(
    'refuses a second open of a directory in use, naming the directory, the pid and DATABASE_URL',
    async () => {
      const dir = tempDir();
      const first = await open(dir);
      expect(fs.readFileSync(path.join(dir, PGLITE_LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));

      const second = createPgliteClient(dir);
      await expect(second).rejects.toThrow(
        `The embedded store at ${dir} is in use by process ${process.pid}`,
      );
      await expect(second).rejects.toThrow(/set DATABASE_URL .*share a store/);

      // The failed open left the first one working and its lock in place.
      expect((await first.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect(fs.readFileSync(path.join(dir, PGLITE_LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
    },
    OPEN_TIMEOUT_MS,
  );

  it(
    'releases the lock on close, so the directory opens again with its data',
    async () => {
      const dir = tempDir();
      const first = await createPgliteClient(dir);
      await first.exec('CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$still here$$);');
      await first.close();
      await first.close();
      expect(fs.existsSync(path.join(dir, PGLITE_LOCK_FILE))).toBe(false);

      const again = await open(dir);
      expect((await again.query<{ v: string }>('SELECT v FROM kept')).rows).toEqual([{ v: 'still here' }]);
    },
    OPEN_TIMEOUT_MS,
  );

  it(
    'takes over a stale lock left by a dead process',
    async () => {
      const dir = tempDir();
      fs.writeFileSync(path.join(dir, PGLITE_LOCK_FILE), `${deadPid()}\n`);
      await open(dir);
      expect(fs.readFileSync(path.join(dir, PGLITE_LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
    },
    OPEN_TIMEOUT_MS,
  );

  it(
    'takes over a lock file without a valid pid',
    async () => {
      const dir = tempDir();
      fs.writeFileSync(path.join(dir, PGLITE_LOCK_FILE), 'garbage');
      await open(dir);
      expect(fs.readFileSync(path.join(dir, PGLITE_LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
    },
    OPEN_TIMEOUT_MS,
  );

  it('refuses a directory locked by another live process and leaves its lock alone', async () => {
    const dir = tempDir();
    const holder: ChildProcess = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], {
      stdio: 'ignore',
    });
    cleanups.push(() => {
      holder.kill();
    });
    const holderPid = holder.pid!;
    fs.writeFileSync(path.join(dir, PGLITE_LOCK_FILE), `${holderPid}\n`);

    await expect(createPgliteClient(dir)).rejects.toThrow(
      `The embedded store at ${dir} is in use by process ${holderPid}`,
    );
    expect(fs.readFileSync(path.join(dir, PGLITE_LOCK_FILE), 'utf8').trim()).toBe(String(holderPid));
    expect(fs.readdirSync(dir)).toEqual([PGLITE_LOCK_FILE]);
  });
});
