/**
 * The helpers that exist once (issue 31): process liveness, lock files, free ports, PATH lookup, on
 * real processes, files and sockets.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findOnPath, isExecutableFile } from '../../system/executables';
import { releaseLock, tryAcquireLock } from '../../system/lock-file';
import { freePort, isPortFree } from '../../system/ports';
import { isProcessAlive, processExists, processGroupExists, processState } from '../../system/processes';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-system-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The pid of a process that has exited and been reaped. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(child.stdout);
}

describe('process liveness', () => {
  it('knows this process, its group, and a process that is gone', () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(processExists(process.pid)).toBe(true);
    expect(processState(process.pid)).toMatch(/^[RS]$/);
    const gone = deadPid();
    expect(processExists(gone)).toBe(false);
    expect(isProcessAlive(gone)).toBe(false);
    expect(isProcessAlive(0)).toBe(false);
    expect(isProcessAlive(-1)).toBe(false);
    expect(processGroupExists(0)).toBe(false);
  });

  it('counts a zombie as existing but not alive, and sees a process group', async () => {
    // The child exits only once its parent has become `sleep`, which never reaps it: a zombie. (A child
    // that exits at once could be reaped by the shell before its exec, on a slow machine: seen in CI.)
    const script =
      'p=$$; (while [ "$(cat /proc/$p/comm)" != sleep ]; do sleep 0.01; done) & echo $!; exec sleep 30';
    const parent = spawn('sh', ['-c', script], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const zombie = Number(
        await new Promise<string>((resolve) => parent.stdout?.once('data', (data) => resolve(String(data)))),
      );
      const deadline = Date.now() + 20_000;
      while (processState(zombie) !== 'Z' && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(processState(zombie)).toBe('Z');
      expect(processExists(zombie)).toBe(true);
      expect(isProcessAlive(zombie)).toBe(false);
      expect(processGroupExists(parent.pid as number)).toBe(true);
      expect(isProcessAlive(parent.pid as number)).toBe(true);
    } finally {
      process.kill(-(parent.pid as number), 'SIGKILL');
    }
  });
});

describe('lock files', () => {
  it('is held by one process at a time, released by its holder only', () => {
    const lock = path.join(dir, 'a.lock');
    expect(tryAcquireLock(lock, 60_000)).toBe(true);
    expect(tryAcquireLock(lock, 60_000)).toBe(false);
    fs.writeFileSync(lock, `${process.pid + 1_000_000}\n`);
    // Not ours: releasing leaves it; its holder is gone, so the next attempt breaks it.
    releaseLock(lock);
    expect(fs.existsSync(lock)).toBe(true);
    expect(tryAcquireLock(lock, 60_000)).toBe(false);
    expect(tryAcquireLock(lock, 60_000)).toBe(true);
    releaseLock(lock);
    expect(fs.existsSync(lock)).toBe(false);
  });

  it('breaks a lock of a dead holder, and one older than the stale age', () => {
    const lock = path.join(dir, 'b.lock');
    fs.writeFileSync(lock, `${deadPid()}\n`);
    expect(tryAcquireLock(lock, 60_000)).toBe(false);
    expect(fs.existsSync(lock)).toBe(false);
    // An empty lock (a holder that has not written its pid yet) is kept until it is stale.
    fs.writeFileSync(lock, '');
    expect(tryAcquireLock(lock, 60_000)).toBe(false);
    expect(fs.existsSync(lock)).toBe(true);
    const old = new Date(Date.now() - 120_000);
    fs.utimesSync(lock, old, old);
    expect(tryAcquireLock(lock, 60_000)).toBe(false);
    expect(tryAcquireLock(lock, 60_000)).toBe(true);
  });
});

describe('ports', () => {
  it('finds a free port, and sees it taken while something listens on it', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    expect(await isPortFree(port)).toBe(true);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    try {
      expect(await isPortFree(port)).toBe(false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('PATH lookup', () => {
  it('finds executables on PATH, never in the current directory or non-executable files', () => {
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(bin, 'plain'), 'data', { mode: 0o644 });
    fs.mkdirSync(path.join(bin, 'adir'));
    expect(findOnPath('tool', { PATH: `/nonexistent${path.delimiter}${bin}` })).toBe(path.join(bin, 'tool'));
    expect(findOnPath('plain', { PATH: bin })).toBeNull();
    expect(findOnPath('adir', { PATH: bin })).toBeNull();
    expect(isExecutableFile(path.join(bin, 'tool'))).toBe(true);
    // An empty entry would be the current directory to a shell.
    const cwd = process.cwd();
    process.chdir(bin);
    try {
      expect(findOnPath('tool', { PATH: `${path.delimiter}/nonexistent` })).toBeNull();
    } finally {
      process.chdir(cwd);
    }
    expect(findOnPath('sh', { PATH: '/usr/bin:/bin' })).toMatch(/\/sh$/);
  });
});
