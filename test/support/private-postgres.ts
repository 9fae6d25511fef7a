/**
 * A PostgreSQL server of one test's own, for tests that stop and start the database: the suite's
 * shared server must stay up for every other test. It runs the machine's PostgreSQL binaries on a
 * free port, as the `postgres` user when the test runs as root (PostgreSQL refuses to run as root).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findFreePort } from './free-port';

/** A private server: its URL, and stop/start around a test's outage. */
export interface PrivatePostgres {
  readonly url: string;
  stop(): void;
  start(): void;
  /** Stops it and removes its data directory. */
  destroy(): void;
}

/** The directory of the newest PostgreSQL binaries installed (Debian's layout). */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = fs
    .readdirSync(root)
    .filter((name) => fs.existsSync(path.join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error(`no PostgreSQL binaries under ${root}`);
  return path.join(root, versions[0], 'bin');
}

/** Initializes and starts a private server with trust auth and a database `test`. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-pg-'));
  const data = path.join(dir, 'data');
  const port = await findFreePort();
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  const run = (tool: string, args: string[]) =>
    execFileSync(
      asRoot ? 'runuser' : path.join(bin, tool),
      asRoot ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args,
      {
        stdio: 'pipe',
        timeout: 60_000,
      },
    );
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const pgCtl = (action: 'start' | 'stop') =>
    run('pg_ctl', [
      '-D',
      data,
      '-l',
      path.join(dir, 'log'),
      '-w',
      ...(action === 'start'
        ? ['-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']
        : ['-m', 'fast', 'stop']),
    ]);
  pgCtl('start');
  run('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', 'test']);
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/test`,
    stop() {
      if (running) pgCtl('stop');
      running = false;
    },
    start() {
      if (!running) pgCtl('start');
      running = true;
    },
    destroy() {
      try {
        if (running) pgCtl('stop');
      } finally {
        running = false;
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
