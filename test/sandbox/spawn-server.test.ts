/**
 * The spawn server (activities/sandbox/spawn-server.ts), the built one in dist/ (npm run build): tool
 * processes are its children, not this process's; it holds no environment of its own; many calls at
 * once and megabytes of output come through whole; a timeout kills a sandboxed call's whole process
 * group; a server that dies ends its calls (nothing they started survives) and the next call starts a
 * new one; with the server off, processes start directly.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxHost } from '../../activities/sandbox/host';
import { runCaptured } from '../../activities/sandbox/run-captured';
import {
  runningSpawnServer,
  SPAWN_SERVER_ENV,
  type StartedChild,
  spawnServerScript,
  startChild,
  stopSpawnServer,
} from '../../activities/sandbox/spawn-child';
import { DEFAULT_SANDBOX } from '../../core/sandbox-settings';
import { makeWorkspace, processesWithMarker, removeWorkspace, uniqueMarker } from '../tools/helpers';

const ENV = { PATH: '/usr/bin:/bin' };
const MIB = 1024 * 1024;

let workspace: string;
beforeAll(async () => {
  workspace = await makeWorkspace();
});
afterEach(() => {
  delete process.env[SPAWN_SERVER_ENV];
  stopSpawnServer();
});
afterAll(async () => {
  await removeWorkspace(workspace);
});

async function until<T>(what: string, check: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(25);
  }
}

/** Runs `bash -c script` to its end: its output (stdout then stderr), exit code and signal, and pid. */
async function run(script: string, stdin?: string) {
  const started = await startChild({
    file: 'bash',
    args: ['-c', script],
    env: ENV,
    cwd: workspace,
    stdin: stdin !== undefined,
    infoFd: false,
  });
  if (!started.ok) throw new Error(started.error);
  return collect(started.child, started.pid, stdin);
}

async function collect(child: StartedChild, pid: number, stdin?: string) {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code: number | null, signal: string | null) => resolve({ code, signal })),
  );
  if (stdin !== undefined) child.stdin?.end(stdin);
  await new Promise((resolve) => child.once('close', resolve));
  return { pid, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8'), ...(await exit) };
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

describe('spawn server', () => {
  it('is built (npm run build): these tests run the compiled server', () => {
    expect(spawnServerScript()).toMatch(/dist\/activities\/sandbox\/spawn-server\.js$/);
  });

  it('starts the process as its own child, in a group of its own, and holds no environment', async () => {
    const marker = uniqueMarker();
    const started = await startChild({
      file: 'sleep',
      args: [marker],
      env: ENV,
      cwd: workspace,
      stdin: false,
      infoFd: false,
    });
    if (!started.ok) throw new Error(started.error);
    const server = runningSpawnServer();
    expect(server?.pid).toBeDefined();
    expect(server?.pid).not.toBe(process.pid);
    expect(parentOf(started.pid)).toBe(server?.pid);
    // Its own process group (pgid = pid), so a kill of the group reaches everything it starts.
    const stat = readFileSync(`/proc/${started.pid}/stat`, 'utf8');
    expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])).toBe(started.pid);
    expect(readFileSync(`/proc/${server?.pid}/environ`, 'utf8')).toBe('');
    process.kill(-started.pid, 'SIGKILL');
    await new Promise((resolve) => started.child.once('close', resolve));
  });

  it('passes stdout, stderr, the exit code, the environment and stdin through', async () => {
    const result = await run('echo "out $PATH $HOME"; echo err >&2; exit 7');
    expect(result.stdout.toString('utf8')).toBe(`out ${ENV.PATH} \n`);
    expect(result.stderr).toBe('err\n');
    expect(result).toMatchObject({ code: 7, signal: null });
    // Not bash: with a socket on stdin (Node's pipes are socketpairs) it reads ~/.bashrc, as ever.
    const started = await startChild({
      file: 'cat',
      args: [],
      env: ENV,
      cwd: workspace,
      stdin: true,
      infoFd: false,
    });
    if (!started.ok) throw new Error(started.error);
    const echoed = await collect(started.child, started.pid, 'from stdin');
    expect(echoed.stdout.toString('utf8')).toBe('from stdin');
  });

  it('reports a program that cannot start as the direct spawn did', async () => {
    const started = await startChild({
      file: 'no-such-program-here',
      args: [],
      env: ENV,
      cwd: workspace,
      stdin: false,
      infoFd: false,
    });
    expect(started).toEqual({
      ok: false,
      error: 'failed to start no-such-program-here: spawn no-such-program-here ENOENT',
    });
  });

  it('runs many calls at once, each with its own output and exit code', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => run(`for n in 1 2 3; do echo ${i}-$n; done; exit ${i}`)),
    );
    for (const [i, result] of results.entries()) {
      expect(result.stdout.toString('utf8')).toBe(`${i}-1\n${i}-2\n${i}-3\n`);
      expect(result.code).toBe(i);
    }
    expect(new Set(results.map((result) => result.pid)).size).toBe(20);
  });

  it('brings large output through whole, with the reader slower than the writer', async () => {
    const bytes = 32 * MIB;
    const started = await startChild({
      file: 'head',
      args: ['-c', String(bytes), '/dev/zero'],
      env: ENV,
      cwd: workspace,
      stdin: false,
      infoFd: false,
    });
    if (!started.ok) throw new Error(started.error);
    let received = 0;
    let nonZero = false;
    started.child.stdout?.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (chunk.some((byte) => byte !== 0)) nonZero = true;
    });
    // Holding the event loop makes the server's pipe to us fill up: it must wait, not drop or hoard.
    const busy = setInterval(() => {
      const until = Date.now() + 20;
      while (Date.now() < until);
    }, 30);
    await new Promise((resolve) => started.child.once('close', resolve));
    clearInterval(busy);
    expect(received).toBe(bytes);
    expect(nonZero).toBe(false);
  });

  it("kills a sandboxed call's whole process group at its timeout", async () => {
    const marker = uniqueMarker();
    const result = await runCaptured({
      argv: ['bash', '-c', `sleep ${marker} & sleep ${marker} & wait`],
      workspace,
      sessionId: `spawn-server-${process.pid}`,
      settings: DEFAULT_SANDBOX,
      host: defaultSandboxHost(),
      timeoutMs: 1_000,
    });
    expect(result).toMatchObject({ timedOut: true, code: null });
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it('ends the calls of a server that dies, leaving nothing running, and starts a new one', async () => {
    const marker = uniqueMarker();
    const started = await startChild({
      file: 'bash',
      args: ['-c', `sleep ${marker} & sleep ${marker}; wait`],
      env: ENV,
      cwd: workspace,
      stdin: false,
      infoFd: false,
    });
    if (!started.ok) throw new Error(started.error);
    const first = runningSpawnServer()?.pid as number;
    await until('both sleepers', () => processesWithMarker(marker).length >= 2);
    const ended = collect(started.child, started.pid);
    process.kill(first, 'SIGKILL');
    expect(await ended).toMatchObject({ code: null, signal: 'SIGKILL' });
    await until('the sleepers to be killed', () => processesWithMarker(marker).length === 0);

    const after = await run('echo again');
    expect(after.stdout.toString('utf8')).toBe('again\n');
    expect(runningSpawnServer()?.pid).toBeDefined();
    expect(runningSpawnServer()?.pid).not.toBe(first);
  });

  it(`starts processes directly with ${SPAWN_SERVER_ENV}=off`, async () => {
    process.env[SPAWN_SERVER_ENV] = 'off';
    const marker = uniqueMarker();
    const started = await startChild({
      file: 'sleep',
      args: [marker],
      env: ENV,
      cwd: workspace,
      stdin: false,
      infoFd: false,
    });
    if (!started.ok) throw new Error(started.error);
    expect(parentOf(started.pid)).toBe(process.pid);
    expect(runningSpawnServer()).toBeUndefined();
    process.kill(-started.pid, 'SIGKILL');
    await new Promise((resolve) => started.child.once('close', resolve));
  });
});
