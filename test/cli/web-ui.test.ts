/**
 * The Web UI link goalrun prints: read from goalrun's dev-server record or from the running dev
 * server's command line, never guessed as frontend port + 1000, and null when no UI is known.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEV_SERVER_FILES, runDevServerForeground, stopBackgroundDevServer } from '../../cli/dev-server';
import { parseDevServerRecord, recordedHttpPort } from '../../cli/dev-server-record';
import { ensureTemporalServer } from '../../cli/dev-server-start';
import {
  DEV_SERVER_RECORD_FILE,
  isDevServerCommand,
  parseDevServerCommand,
  webUiUrl,
  writeDevServerRecord,
} from '../../cli/web-ui';
import { killAndWait, tempDir, waitFor } from '../support/cli';
import { findFreePort } from '../support/temporal-server';

const SERVER_TEST_TIMEOUT_MS = 60_000;
const HAS_PROC = existsSync('/proc/self/cmdline');
const madeDirs: string[] = [];
afterAll(() => {
  for (const dir of madeDirs) rmSync(dir, { recursive: true, force: true });
});

/** A temp dir removed after the file's tests. */
function scratchDir(prefix: string): string {
  const dir = tempDir(prefix);
  madeDirs.push(dir);
  return dir;
}

/** A fake process table: one directory per pid holding a NUL-separated `cmdline`. */
function fakeProc(processes: Record<number, string[]>): string {
  const dir = scratchDir('proc');
  for (const [pid, argv] of Object.entries(processes)) {
    mkdirSync(join(dir, pid));
    writeFileSync(join(dir, pid, 'cmdline'), `${argv.join('\0')}\0`);
  }
  mkdirSync(join(dir, 'self'));
  return dir;
}

const dev = (...flags: string[]) => ['/opt/bin/temporal', 'server', 'start-dev', ...flags];

describe('parseDevServerCommand', () => {
  it.each([
    { flags: [], frontendPort: 7233, port: 8233 },
    { flags: ['--port', '7000'], frontendPort: 7000, port: 8000 },
    { flags: ['--port=7001', '--ui-port', '3000'], frontendPort: 7001, port: 3000 },
    { flags: ['-p', '7002', '--ui-port=3001'], frontendPort: 7002, port: 3001 },
    { flags: ['-p7003'], frontendPort: 7003, port: 8003 },
    { flags: ['-p=7004', '--ui-port', '1', '--ui-port', '65535'], frontendPort: 7004, port: 65535 },
    { flags: ['--port', '7005', '--headless'], frontendPort: 7005, port: null },
    { flags: ['--headless=false', '--ui-port', '4000'], frontendPort: 7233, port: 4000 },
    { flags: ['--headless=true', '--ui-port', '4000'], frontendPort: 7233, port: null },
  ])('reads $flags', ({ flags, frontendPort, port }) => {
    expect(parseDevServerCommand(dev(...flags))).toMatchObject({ frontendPort, port });
  });

  it('reads the UI address and public path', () => {
    expect(parseDevServerCommand(dev('--ip', '0.0.0.0', '--ui-public-path', 'temporal/'))).toMatchObject({
      ip: '0.0.0.0',
      publicPath: '/temporal',
    });
    expect(parseDevServerCommand(dev('--ip', '127.0.0.1', '--ui-ip=::1')).ip).toBe('::1');
  });

  it('reads the HTTP API port, which has no default it could know', () => {
    expect(parseDevServerCommand(dev('--http-port', '7243')).httpPort).toBe(7243);
    expect(parseDevServerCommand(dev('--http-port=7243', '--http-port', '7244')).httpPort).toBe(7244);
    expect(parseDevServerCommand(dev()).httpPort).toBeUndefined();
  });

  it('recognises only `server start-dev`', () => {
    expect(isDevServerCommand(dev())).toBe(true);
    expect(isDevServerCommand(['temporal', 'workflow', 'list'])).toBe(false);
    expect(isDevServerCommand(['grep', 'start-dev'])).toBe(false);
    expect(isDevServerCommand(['node', 'x.js', 'server'])).toBe(false);
  });
});

describe('webUiUrl', () => {
  const home = scratchDir('web-ui-home');
  const settings = (temporalAddress: string, namespace = 'default') => ({ temporalAddress, namespace, home });
  afterEach(() => rmSync(join(home, DEV_SERVER_RECORD_FILE), { force: true }));

  it('uses the --ui-port of the dev server that serves the address, not port + 1000', () => {
    const procDir = fakeProc({
      10: dev('--port', '7234', '--ui-port', '9999'),
      11: dev('--ip', '127.0.0.1', '--port', '17633', '--ui-port', '18999'),
      12: ['bash', '-c', 'temporal server start-dev --port 17633'],
    });
    expect(webUiUrl(settings('127.0.0.1:17633'), 'goalrun-abc', { procDir })).toBe(
      'http://127.0.0.1:18999/namespaces/default/workflows/goalrun-abc',
    );
    expect(webUiUrl(settings('localhost:7234'), 'w', { procDir })).toBe(
      'http://localhost:9999/namespaces/default/workflows/w',
    );
  });

  it('follows the server defaults, the UI address and the public path', () => {
    const procDir = fakeProc({
      20: dev(),
      21: dev('--port', '7300', '--ip', '0.0.0.0', '--ui-public-path', '/ui/'),
      22: dev('--port', '7301', '--ui-ip', '::1', '--ui-port', '3301'),
    });
    expect(webUiUrl(settings('localhost:7233'), 'w', { procDir })).toBe(
      'http://localhost:8233/namespaces/default/workflows/w',
    );
    expect(webUiUrl(settings('127.0.0.1:7300'), 'w', { procDir })).toBe(
      'http://127.0.0.1:8300/ui/namespaces/default/workflows/w',
    );
    expect(webUiUrl(settings('localhost:7301'), 'w', { procDir })).toBe(
      'http://[::1]:3301/namespaces/default/workflows/w',
    );
  });

  it('encodes the namespace and the workflow id', () => {
    const procDir = fakeProc({ 30: dev() });
    expect(webUiUrl(settings('localhost', 'team a/b'), 'goal #1?', { procDir })).toBe(
      'http://localhost:8233/namespaces/team%20a%2Fb/workflows/goal%20%231%3F',
    );
  });

  it('is null for a remote server, a headless one, or none it can identify', () => {
    const procDir = fakeProc({ 40: dev('--port', '7400', '--headless'), 41: ['node', 'worker.js'] });
    expect(webUiUrl(settings('temporal.example.com:7233'), 'w', { procDir })).toBeNull();
    expect(webUiUrl(settings('localhost:7400'), 'w', { procDir })).toBeNull();
    expect(webUiUrl(settings('localhost:7401'), 'w', { procDir })).toBeNull();
    expect(webUiUrl(settings('localhost:7401'), 'w', { procDir: join(home, 'no-such-proc') })).toBeNull();
  });

  it("prefers goalrun's record while its server lives, and ignores a stale or foreign one", () => {
    const procDir = fakeProc({ 50: dev('--port', '7500', '--ui-port', '8500'), 51: ['sleep', '60'] });
    writeDevServerRecord(home, { address: 'localhost:7500', uiPort: 3500, pid: 50 });
    expect(webUiUrl(settings('127.0.0.1:7500'), 'w', { procDir })).toBe(
      'http://127.0.0.1:3500/namespaces/default/workflows/w',
    );
    // The recorded pid now belongs to something else: the process table decides.
    writeDevServerRecord(home, { address: 'localhost:7500', uiPort: 3500, pid: 51 });
    expect(webUiUrl(settings('localhost:7500'), 'w', { procDir })).toBe(
      'http://localhost:8500/namespaces/default/workflows/w',
    );
    // A record of another address says nothing about this one.
    writeDevServerRecord(home, { address: 'localhost:7600', uiPort: 3600, pid: 50 });
    expect(webUiUrl(settings('localhost:7500'), 'w', { procDir })).toBe(
      'http://localhost:8500/namespaces/default/workflows/w',
    );
    writeDevServerRecord(home, { address: 'localhost:7500', uiPort: null, pid: 50 });
    expect(webUiUrl(settings('localhost:7500'), 'w', { procDir })).toBeNull();
    writeFileSync(join(home, DEV_SERVER_RECORD_FILE), '{"address": 7500}');
    expect(webUiUrl(settings('localhost:7500'), 'w', { procDir })).toBe(
      'http://localhost:8500/namespaces/default/workflows/w',
    );
  });
});

describe('the HTTP API port in the dev-server record', () => {
  const home = scratchDir('http-record');

  it('is read for the address the live server serves, and for nothing else', () => {
    const procDir = fakeProc({ 60: dev('--port', '7700', '--http-port', '7710'), 61: ['sleep', '60'] });
    writeDevServerRecord(home, { address: 'localhost:7700', uiPort: 8700, httpPort: 7710, pid: 60 });
    expect(recordedHttpPort(home, '127.0.0.1:7700', procDir)).toBe(7710);
    expect(recordedHttpPort(home, 'localhost:7700', procDir)).toBe(7710);
    // Another port, a remote host, a dead or foreign pid, an unparsable address: no HTTP API known.
    expect(recordedHttpPort(home, 'localhost:7701', procDir)).toBeNull();
    expect(recordedHttpPort(home, 'temporal.example:7700', procDir)).toBeNull();
    expect(recordedHttpPort(home, 'localhost:notaport', procDir)).toBeNull();
    writeDevServerRecord(home, { address: 'localhost:7700', uiPort: 8700, httpPort: 7710, pid: 61 });
    expect(recordedHttpPort(home, 'localhost:7700', procDir)).toBeNull();
    // A record of an older goalrun has no HTTP port.
    writeDevServerRecord(home, { address: 'localhost:7700', uiPort: 8700, pid: 60 });
    expect(recordedHttpPort(home, 'localhost:7700', procDir)).toBeNull();
    expect(recordedHttpPort(scratchDir('no-record'), 'localhost:7700', procDir)).toBeNull();
  });

  it('is checked by hand: a record is exactly its fields, or nothing', () => {
    const record = { address: 'localhost:7700', uiPort: null, httpPort: 7710, pid: 60 };
    expect(parseDevServerRecord(record)).toEqual(record);
    expect(parseDevServerRecord({ ...record, extra: true })).toEqual(record);
    for (const bad of [
      null,
      'x',
      { ...record, address: '' },
      { ...record, uiPort: 0 },
      { ...record, uiPort: undefined },
      { ...record, httpPort: 70000 },
      { ...record, httpPort: '7710' },
      { ...record, pid: 1.5 },
      { ...record, pid: -1 },
    ]) {
      expect(parseDevServerRecord(bad), JSON.stringify(bad)).toBeNull();
    }
    expect(() => writeDevServerRecord(home, { ...record, pid: 0 })).toThrow(/not a dev-server record/);
  });
});

describe.skipIf(!HAS_PROC)('webUiUrl against real processes', { timeout: SERVER_TEST_TIMEOUT_MS }, () => {
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child) await killAndWait(child);
    child = undefined;
  });

  it('reads a live process command line from /proc', async () => {
    const [port, uiPort] = [await findFreePort(), await findFreePort()];
    // Any process whose arguments read `server start-dev` stands in for the temporal binary here.
    child = spawn(
      process.execPath,
      [
        '-e',
        'setInterval(() => {}, 1000)',
        'server',
        'start-dev',
        '--port',
        String(port),
        '--ui-port',
        String(uiPort),
      ],
      { stdio: 'ignore' },
    );
    await new Promise((resolve) => child?.once('spawn', resolve));
    const settings = {
      temporalAddress: `127.0.0.1:${port}`,
      namespace: 'default',
      home: scratchDir('web-ui-real'),
    };
    expect(webUiUrl(settings, 'w')).toBe(`http://127.0.0.1:${uiPort}/namespaces/default/workflows/w`);
    await killAndWait(child);
    expect(webUiUrl(settings, 'w')).toBeNull();
  });

  it('`goalrun dev` records its server while it runs and removes the record when it exits', async () => {
    const home = scratchDir('web-ui-dev');
    const fakeBinary = join(home, 'fake-temporal');
    // Stands in for the temporal binary: it keeps the arguments goalrun gave it and waits for a signal.
    writeFileSync(fakeBinary, "#!/bin/sh\ntrap 'kill $!; exit 0' TERM\nsleep 60 &\nwait\n");
    chmodSync(fakeBinary, 0o755);
    const port = await findFreePort();
    const settings = { temporalAddress: `localhost:${port}`, namespace: 'default', home };
    const exited = runDevServerForeground({ home, address: settings.temporalAddress, binary: fakeBinary });
    const recordFile = join(home, DEV_SERVER_FILES.record);
    const record = await waitFor('the dev-server record', () =>
      existsSync(recordFile) ? JSON.parse(readFileSync(recordFile, 'utf8')) : undefined,
    );
    expect(record).toEqual({
      address: settings.temporalAddress,
      uiPort: port + 1000,
      // port + 10 when it was free, else another free port.
      httpPort: expect.any(Number),
      pid: expect.any(Number),
    });
    expect(webUiUrl(settings, 'w')).toBe(`http://localhost:${port + 1000}/namespaces/default/workflows/w`);
    process.kill(record.pid, 'SIGTERM');
    await exited;
    expect(existsSync(join(home, DEV_SERVER_FILES.record))).toBe(false);
  });
});

describe('webUiUrl for the background dev server', { timeout: SERVER_TEST_TIMEOUT_MS }, () => {
  const home = tempDir('web-ui-background');
  let address: string;
  let uiPort: number;

  beforeAll(async () => {
    const port = await findFreePort();
    address = `127.0.0.1:${port}`;
    do uiPort = await findFreePort();
    while (uiPort === port + 1000);
  });
  afterAll(async () => {
    await stopBackgroundDevServer(home);
    rmSync(home, { recursive: true, force: true });
  });

  it('links to the UI port the server was started with, and to nothing once it stopped', async () => {
    const started = await ensureTemporalServer({ address, home, uiPort, log: () => {} });
    expect(started.started).toBe(true);
    const url = webUiUrl({ temporalAddress: address, namespace: 'default', home }, 'goalrun-x');
    expect(url).toBe(`http://127.0.0.1:${uiPort}/namespaces/default/workflows/goalrun-x`);
    // The link leads to the UI itself (it serves its single-page app on every path).
    const response = await fetch(url!);
    expect(response.ok).toBe(true);
    expect(await response.text()).toMatch(/<html/i);
    // Without /proc the record alone must carry the port.
    const noProc = { procDir: join(home, 'no-such-proc') };
    expect(webUiUrl({ temporalAddress: address, namespace: 'default', home }, 'w', noProc)).toBe(
      `http://127.0.0.1:${uiPort}/namespaces/default/workflows/w`,
    );
    expect(await stopBackgroundDevServer(home)).toBe(true);
    expect(existsSync(join(home, DEV_SERVER_FILES.record))).toBe(false);
    expect(webUiUrl({ temporalAddress: address, namespace: 'default', home }, 'goalrun-x')).toBeNull();
  });
});
