/**
 * The PostgreSQL cluster of the embedded store: creating it (initdb), checking that the binaries can
 * open it, and spawning its server on a loopback port, detached. The lifecycle is in embedded-server.ts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, isPortFree } from '../system/ports';
import type { PostgresBinaries, PostgresRunner } from './embedded-binaries';
import {
  EMBEDDED_HOST,
  EMBEDDED_USER,
  type EmbeddedStorePaths,
  readRecordedPort,
  recordPort,
} from './embedded-files';

/** initdb with a new random password; a directory left by an interrupted initdb is started afresh. */
export function initializeCluster(
  paths: EmbeddedStorePaths,
  binaries: PostgresBinaries,
  runner: PostgresRunner,
): void {
  fs.rmSync(paths.dataDir, { recursive: true, force: true });
  fs.writeFileSync(paths.passwordFile, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
  runner.adopt([paths.passwordFile]);
  const { command, args, uid, gid } = runner.command(binaries.initdb, [
    `--pgdata=${paths.dataDir}`,
    `--username=${EMBEDDED_USER}`,
    `--pwfile=${paths.passwordFile}`,
    '--auth=scram-sha-256',
    '--encoding=UTF8',
    '--locale=C',
  ]);
  const result = spawnSync(command, args, { encoding: 'utf8', env: serverEnvironment(), uid, gid });
  if (result.status !== 0) {
    fs.rmSync(paths.dataDir, { recursive: true, force: true });
    const output = `${result.error?.message ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-10);
    throw new Error(
      `Could not create the embedded store in ${paths.dataDir} (initdb from ${binaries.packageName}, run ` +
        `${runner.description}, failed):\n${output.map((line) => `  ${line}`).join('\n')}`,
    );
  }
}

/** A data directory made by another major version of PostgreSQL cannot be opened: say so plainly. */
export function checkClusterVersion(
  paths: EmbeddedStorePaths,
  binaries: PostgresBinaries,
  runner: PostgresRunner,
): void {
  const dataVersion = fs.readFileSync(path.join(paths.dataDir, 'PG_VERSION'), 'utf8').trim();
  const { command, args, uid, gid } = runner.command(binaries.postgres, ['--version']);
  const output = spawnSync(command, args, { encoding: 'utf8', uid, gid }).stdout ?? '';
  const binaryVersion = /PostgreSQL\) (\d+)/.exec(output)?.[1];
  if (binaryVersion && binaryVersion !== dataVersion) {
    throw new Error(
      `The embedded store in ${paths.dataDir} was created by PostgreSQL ${dataVersion}, but ` +
        `${binaries.packageName} holds PostgreSQL ${binaryVersion}. Install the matching package version, ` +
        `or move ${paths.dir} away to start an empty store (export the old one first with PostgreSQL ` +
        `${dataVersion}'s pg_dump if you need it).`,
    );
  }
}

/** Starts the server detached, with its output appended to the log; resolves with its pid once spawned. */
export async function spawnServer(
  paths: EmbeddedStorePaths,
  binaries: PostgresBinaries,
  runner: PostgresRunner,
  port: number,
): Promise<number> {
  const { command, args, uid, gid } = runner.command(binaries.postgres, [
    '-D',
    paths.dataDir,
    '-p',
    String(port),
    '-c',
    `listen_addresses=${EMBEDDED_HOST}`,
    '-c',
    'unix_socket_directories=',
  ]);
  const logFd = fs.openSync(paths.logFile, 'a');
  try {
    // detached + its own log file: the server outlives this process, like a daemon.
    const child = spawn(command, args, {
      cwd: paths.dir,
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: serverEnvironment(),
      uid,
      gid,
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid!));
      child.once('error', (error) => reject(new Error(`Could not start ${command}: ${error.message}`)));
    });
    child.unref();
    return pid;
  } finally {
    fs.closeSync(logFd);
  }
}

/** The recorded port if it is still free, else a new free port; recorded either way. */
export async function choosePort(paths: EmbeddedStorePaths): Promise<number> {
  const recorded = readRecordedPort(paths);
  const port =
    recorded !== null && (await isPortFree(recorded, EMBEDDED_HOST))
      ? recorded
      : await freePort(EMBEDDED_HOST);
  if (port !== recorded) recordPort(paths, port);
  return port;
}

/** PostgreSQL needs no secret of goalrun's environment (provider keys): give it only what it uses. */
function serverEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { LC_ALL: 'C', LANG: 'C' };
  for (const name of ['PATH', 'TZ', 'TMPDIR']) if (process.env[name]) env[name] = process.env[name];
  return env;
}
