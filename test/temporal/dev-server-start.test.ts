/**
 * Starting the background dev server on a busy machine: a taken Web UI port, a frontend port held by
 * another program, and a start that loses a port to another program as it binds (a stand-in binary
 * fails like the real one did in CI, then hands over to the real binary).
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEV_SERVER_FILES, stopBackgroundDevServer, uiPortFor } from '../../cli/dev-server';
import { logExcerpt, takenPortIn } from '../../cli/dev-server-files';
import { ensureTemporalServer } from '../../cli/dev-server-start';
import { isTemporalReachable } from '../../cli/temporal-address';
import { findTemporalBinary } from '../../cli/temporal-binary';
import { isPortFree } from '../../system/ports';
import { findFreePort } from '../support/temporal-server';

const SERVER_TEST_TIMEOUT_MS = 90_000;
const BIND_FAILURE = 'listen tcp 127.0.0.1:4242: bind: address already in use';

/** A Go panic as the dev server prints it: the reason first, then a stack longer than any tail. */
function goPanic(reason: string, stackLines = 40): string {
  const stack = Array.from({ length: stackLines }, (_, i) => `\tgo.temporal.io/server/frame${i}.go:${i}`);
  return [`panic: ${reason}`, '', 'goroutine 1 [running]:', ...stack].join('\n');
}

/** Whether the URL answers 200 within a while: the UI listens a moment after the frontend does. */
async function answersHttp(url: string, tries = 100): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

describe('logExcerpt and takenPortIn', () => {
  it('keeps a panic reason that scrolled above the tail', () => {
    const excerpt = logExcerpt(`some startup noise\n${goPanic(BIND_FAILURE)}\n`, 5).split('\n');
    expect(excerpt[0]).toBe(`  panic: ${BIND_FAILURE}`);
    expect(excerpt[1]).toBe('  …');
    expect(excerpt.slice(2)).toHaveLength(5);
    expect(excerpt.at(-1)).toBe('  \tgo.temporal.io/server/frame39.go:39');
  });

  it('shows the tail alone when the reason is in it or there is none', () => {
    expect(logExcerpt('a\nb\npanic: boom\nc', 5)).toBe('  a\n  b\n  panic: boom\n  c');
    expect(logExcerpt('x\ny\nz', 2)).toBe('  y\n  z');
  });

  it('reads the port out of a bind failure, in a panic or in a logged error', () => {
    expect(takenPortIn(goPanic(BIND_FAILURE))).toBe(4242);
    expect(
      takenPortIn(`msg="can't set UI port 8233: listen tcp 127.0.0.1:8233: bind: address already in use"`),
    ).toBe(8233);
    expect(takenPortIn(goPanic('database is locked'))).toBeNull();
  });
});

describe('ensureTemporalServer on a busy machine', { timeout: SERVER_TEST_TIMEOUT_MS }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function newHome(): string {
    const home = mkdtempSync(join(tmpdir(), 'goalrun-dev-start-'));
    cleanups.push(async () => {
      await stopBackgroundDevServer(home);
      rmSync(home, { recursive: true, force: true });
    });
    return home;
  }

  /** Holds a port the way a foreign program would: it accepts connections and says nothing. */
  async function hold(port: number): Promise<void> {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          // close() waits for open connections: the reachability probes may have left some.
          for (const socket of sockets) socket.destroy();
          server.close(() => resolve());
        }),
    );
  }

  /**
   * A stand-in for the temporal binary: its first `failures` runs fail as a start that lost a port
   * does, the later ones run the real binary. It counts its runs in `runs`.
   */
  function flakyBinary(home: string, failures: number): { binary: string; runs: () => number } {
    const real = findTemporalBinary();
    if (!real) throw new Error('the temporal binary is missing (npm run temporal)');
    const counter = join(home, 'runs');
    const panicFile = join(home, 'panic.txt');
    writeFileSync(panicFile, `${goPanic(BIND_FAILURE)}\n`);
    writeFileSync(counter, '');
    const binary = join(home, 'temporal-stand-in');
    writeFileSync(
      binary,
      [
        '#!/bin/sh',
        `echo run >> '${counter}'`,
        `if [ "$(wc -l < '${counter}')" -le ${failures} ]; then cat '${panicFile}'; exit 2; fi`,
        `exec '${real}' "$@"`,
        '',
      ].join('\n'),
    );
    chmodSync(binary, 0o755);
    return { binary, runs: () => readFileSync(counter, 'utf8').split('\n').filter(Boolean).length };
  }

  it('starts again when a start loses a port to another program, and says so', async () => {
    const home = newHome();
    const { binary, runs } = flakyBinary(home, 2);
    const address = `127.0.0.1:${await findFreePort()}`;
    const logs: string[] = [];
    const result = await ensureTemporalServer({ address, home, binary, log: (line) => logs.push(line) });
    expect(result.started).toBe(true);
    expect(runs()).toBe(3);
    expect(await isTemporalReachable(address)).toBe(true);
    expect(logs.filter((line) => line.includes('lost port 4242 to another program'))).toHaveLength(2);
    expect(Number(readFileSync(join(home, DEV_SERVER_FILES.pid), 'utf8'))).toBe(result.pid);
  });

  it('gives up after three starts, naming the reason above the stack', async () => {
    const home = newHome();
    const { binary, runs } = flakyBinary(home, 99);
    const address = `127.0.0.1:${await findFreePort()}`;
    const failure = ensureTemporalServer({ address, home, binary, log: () => {} });
    await expect(failure).rejects.toThrow(/exited during startup \(exit code 2\)/);
    await expect(failure).rejects.toThrow(`  panic: ${BIND_FAILURE}\n  …\n`);
    expect(runs()).toBe(3);
  });

  it('does not retry a failure that is not a lost port', async () => {
    const home = newHome();
    const binary = join(home, 'temporal-broken');
    writeFileSync(
      binary,
      `#!/bin/sh\necho run >> '${join(home, 'runs')}'\necho 'panic: database is locked'\nexit 2\n`,
    );
    chmodSync(binary, 0o755);
    const address = `127.0.0.1:${await findFreePort()}`;
    await expect(ensureTemporalServer({ address, home, binary, log: () => {} })).rejects.toThrow(
      /panic: database is locked/,
    );
    expect(readFileSync(join(home, 'runs'), 'utf8')).toBe('run\n');
  });

  it('names a frontend port that another program holds, without starting anything', async () => {
    const home = newHome();
    const port = await findFreePort();
    await hold(port);
    const binary = join(home, 'temporal-never');
    writeFileSync(binary, `#!/bin/sh\necho run >> '${join(home, 'runs')}'\nexit 1\n`);
    chmodSync(binary, 0o755);
    await expect(
      ensureTemporalServer({ address: `127.0.0.1:${port}`, home, binary, log: () => {} }),
    ).rejects.toThrow(
      `port ${port} on 127.0.0.1 is taken by a program that does not answer as a Temporal server`,
    );
    expect(await isPortFree(port)).toBe(false);
    expect(() => readFileSync(join(home, 'runs'))).toThrow(/ENOENT/);
  });

  it('serves the Web UI on another port when frontend + 1000 is taken, and records it', async () => {
    const home = newHome();
    // A frontend port whose UI port we can hold: take a free port for the UI, derive the frontend.
    let port = 0;
    for (let tries = 0; port === 0 && tries < 20; tries++) {
      const candidate = (await findFreePort()) - 1000;
      if (candidate > 1024 && uiPortFor(candidate) === candidate + 1000 && (await isPortFree(candidate))) {
        try {
          await hold(candidate + 1000);
          port = candidate;
        } catch {
          // Taken between the probe and the hold: try another.
        }
      }
    }
    expect(port).toBeGreaterThan(0);
    const logs: string[] = [];
    const result = await ensureTemporalServer({
      address: `127.0.0.1:${port}`,
      home,
      log: (l) => logs.push(l),
    });
    expect(result.started).toBe(true);
    const record = JSON.parse(readFileSync(join(home, DEV_SERVER_FILES.record), 'utf8'));
    expect(record.uiPort).not.toBe(port + 1000);
    expect(result.uiUrl).toBe(`http://localhost:${record.uiPort}`);
    expect(logs[0]).toContain(`Web UI http://localhost:${record.uiPort}`);
    expect(await answersHttp(`http://127.0.0.1:${record.uiPort}/`)).toBe(true);
  });
});
