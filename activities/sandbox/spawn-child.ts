/**
 * Starts a tool process: through the tool host's spawn server (spawn-server.ts) when it runs, so the
 * worker's large heap is never forked; else directly, as before, with a notice in the log. Same
 * program, arguments, environment, directory and pipes either way, each process in a group of its own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { log } from '@temporalio/activity';
import { type RemoteChild, SpawnServer, SpawnServerGone } from './spawn-client';
import type { SpawnRequest } from './spawn-protocol';

/** `off` starts every process directly (for comparison, or where the server cannot run). */
export const SPAWN_SERVER_ENV = 'GOALRUN_SPAWN_SERVER';
/** A server that dies this many times within the window is given up on for the window. */
const MAX_DEATHS = 3;
const DEATH_WINDOW_MS = 60_000;

/** A started process: a ChildProcess, or a process the spawn server started. */
export interface StartedChild extends EventEmitter {
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  readonly stdin: Writable | null;
  readonly stdio: ReadonlyArray<Readable | Writable | null | undefined>;
}

/** What to start; see {@link SpawnRequest}. */
export type ChildRequest = SpawnRequest;

let server: SpawnServer | undefined;
let deaths: number[] = [];
let noticed = false;

/** The compiled server: beside this file in dist/, or dist/'s copy when running from the sources (tests). */
export function spawnServerScript(): string | undefined {
  const candidates = [
    path.join(__dirname, 'spawn-server.js'),
    path.resolve(__dirname, '..', '..', 'dist', 'activities', 'sandbox', 'spawn-server.js'),
  ];
  return candidates.find((file) => fs.existsSync(file));
}

function notice(message: string): void {
  const line = `${message}; tools are started from the worker process directly (slower, same sandbox)`;
  try {
    log.warn(line);
  } catch {
    // Outside an activity (tests, scripts) there is no activity logger.
    console.warn(`goalrun: ${line}`);
  }
}

/** The running server, started (or restarted) on demand; undefined when processes start directly. */
function currentServer(): SpawnServer | undefined {
  if (process.env[SPAWN_SERVER_ENV] === 'off') return undefined;
  if (server?.alive) return server;
  const now = Date.now();
  deaths = deaths.filter((at) => now - at < DEATH_WINDOW_MS);
  if (deaths.length >= MAX_DEATHS) return undefined;
  const script = spawnServerScript();
  if (!script) {
    if (!noticed) notice('spawn server not found (run npm run build)');
    noticed = true;
    return undefined;
  }
  const started = new SpawnServer(script);
  started.onGone = (reason) => {
    deaths.push(Date.now());
    if (deaths.length >= MAX_DEATHS) notice(`${reason}, ${MAX_DEATHS} times within a minute`);
  };
  server = started;
  return server;
}

/** Starts the process; an error (a missing program, a bad directory) is returned, not thrown. */
export async function startChild(
  request: ChildRequest,
): Promise<{ ok: true; child: StartedChild; pid: number } | { ok: false; error: string }> {
  const remote = currentServer();
  if (remote) {
    try {
      const child: RemoteChild = await remote.start(request);
      return { ok: true, child, pid: child.pid as number };
    } catch (error) {
      // A server that never came up started nothing: start it here. One that died while starting it
      // may have started it: running it twice could repeat what it did, so the call fails.
      if (!(error instanceof SpawnServerGone) || !error.neverReady)
        return { ok: false, error: `failed to start ${request.file}: ${(error as Error).message}` };
    }
  }
  return startDirectly(request);
}

async function startDirectly(
  request: ChildRequest,
): Promise<{ ok: true; child: StartedChild; pid: number } | { ok: false; error: string }> {
  let child: ChildProcess;
  try {
    child = spawn(request.file, request.args, {
      cwd: request.cwd,
      env: request.env,
      // Own process group (pgid = pid), so the whole tree can be signalled at once.
      detached: true,
      stdio: [
        request.stdin ? 'pipe' : 'ignore',
        'pipe',
        'pipe',
        ...(request.infoFd ? ['pipe' as const] : []),
      ],
    });
  } catch (error) {
    return { ok: false, error: `failed to start ${request.file}: ${(error as Error).message}` };
  }
  const failed = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', resolve);
  });
  if (failed) return { ok: false, error: `failed to start ${request.file}: ${failed.message}` };
  return { ok: true, child, pid: child.pid as number };
}

/** Stops the spawn server (tests); the next start begins a new one. */
export function stopSpawnServer(): void {
  server?.stop();
  server = undefined;
  deaths = [];
}

/** The running spawn server, if any (tests). */
export function runningSpawnServer(): SpawnServer | undefined {
  return server?.alive ? server : undefined;
}
