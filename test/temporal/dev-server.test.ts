import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEV_SERVER_FILES,
  devServerArgs,
  isTemporalReachable,
  parseTemporalAddress,
  runDevServerForeground,
  SEARCH_ATTRIBUTES,
  stopBackgroundDevServer,
  uiPortFor,
} from '../../cli/dev-server';
import { recordedHttpPort } from '../../cli/dev-server-record';
import { ensureTemporalServer } from '../../cli/dev-server-start';
import { isHttpApiReachable } from '../../cli/temporal-http';
import { findFreePort, startTestTemporalServer } from '../support/temporal-server';

const SERVER_TEST_TIMEOUT_MS = 60_000;
// temporal.api.enums.v1.IndexedValueType values (@temporalio/proto is not a direct dependency).
const INDEXED_VALUE_TYPE_KEYWORD = 2;
const INDEXED_VALUE_TYPE_INT = 3;

describe('devServerArgs', () => {
  it('binds to loopback, persists to the db file and registers goalrun search attributes', () => {
    const args = devServerArgs({ port: 7233, uiPort: 8233, httpPort: 7243, dbFile: '/data/temporal.db' });
    expect(args.slice(0, 2)).toEqual(['server', 'start-dev']);
    const pairs = (flag: string) => args.flatMap((arg, i) => (arg === flag ? [args[i + 1]] : []));
    expect(pairs('--ip')).toEqual(['127.0.0.1']);
    expect(pairs('--port')).toEqual(['7233']);
    expect(pairs('--ui-port')).toEqual(['8233']);
    expect(pairs('--http-port')).toEqual(['7243']);
    expect(pairs('--db-filename')).toEqual(['/data/temporal.db']);
    expect(pairs('--log-level')).toEqual(['warn']);
    expect(pairs('--search-attribute')).toEqual([
      'GoalStatus=Keyword',
      'GoalSession=Keyword',
      'GoalModel=Keyword',
      'GoalIteration=Int',
    ]);
    expect(args).not.toContain('--headless');
  });

  it('drops the UI when headless, stays in memory without a db file, and appends extras', () => {
    const args = devServerArgs({
      port: 17233,
      uiPort: 18233,
      headless: true,
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 40, 'some.stringKey': 'x' },
      extraArgs: ['--namespace', 'other'],
    });
    expect(args).toContain('--headless');
    expect(args).not.toContain('--ui-port');
    // The server then picks a random HTTP port.
    expect(args).not.toContain('--http-port');
    expect(args).not.toContain('--db-filename');
    expect(args).toContain('limit.historyCount.suggestContinueAsNew=40');
    // The CLI parses dynamic config values as JSON, so strings must arrive quoted.
    expect(args).toContain('some.stringKey="x"');
    expect(args.slice(-2)).toEqual(['--namespace', 'other']);
  });

  it('lists exactly the attributes goalrun upserts', () => {
    expect(SEARCH_ATTRIBUTES).toEqual({
      GoalStatus: 'Keyword',
      GoalSession: 'Keyword',
      GoalModel: 'Keyword',
      GoalIteration: 'Int',
    });
  });
});

describe('parseTemporalAddress', () => {
  it('parses host:port, bracketed IPv6 and bare hosts', () => {
    expect(parseTemporalAddress('localhost:7233')).toEqual({ host: 'localhost', port: 7233 });
    expect(parseTemporalAddress('[::1]:7300')).toEqual({ host: '::1', port: 7300 });
    expect(parseTemporalAddress('temporal')).toEqual({ host: 'temporal', port: 7233 });
    expect(parseTemporalAddress('::1')).toEqual({ host: '::1', port: 7233 });
    expect(() => parseTemporalAddress('localhost:notaport')).toThrow(/bad port/);
  });

  it('puts the UI 1000 ports above the frontend', () => {
    expect(uiPortFor(7233)).toBe(8233);
    expect(uiPortFor(65_000)).toBe(64_000);
  });
});

describe('isTemporalReachable', () => {
  it('is false for a closed port and for a TCP server that is not Temporal', async () => {
    expect(await isTemporalReachable(`127.0.0.1:${await findFreePort()}`, 500)).toBe(false);
    const silent: Server = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      expect(await isTemporalReachable(`127.0.0.1:${port}`, 500)).toBe(false);
    } finally {
      silent.close();
    }
  });
});

describe('ensureTemporalServer', { timeout: SERVER_TEST_TIMEOUT_MS }, () => {
  let home: string;
  let address: string;
  let uiPort: number;
  const logs: string[] = [];
  const log = (message: string) => logs.push(message);

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'goalrun-dev-server-'));
    address = `127.0.0.1:${await findFreePort()}`;
    uiPort = await findFreePort();
  });

  afterAll(async () => {
    await stopBackgroundDevServer(home);
    rmSync(home, { recursive: true, force: true });
  });

  it('starts exactly one background server when two callers race', async () => {
    const results = await Promise.all([
      ensureTemporalServer({ address, home, log, uiPort }),
      ensureTemporalServer({ address, home, log, uiPort }),
    ]);
    const started = results.filter((result) => result.started);
    expect(started).toHaveLength(1);
    expect(started[0].uiUrl).toBe(`http://localhost:${uiPort}`);
    expect(await isTemporalReachable(address)).toBe(true);
    expect(Number(readFileSync(join(home, DEV_SERVER_FILES.pid), 'utf8'))).toBe(started[0].pid);
    expect(existsSync(join(home, DEV_SERVER_FILES.db))).toBe(true);
    expect(existsSync(join(home, DEV_SERVER_FILES.lock))).toBe(false);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain(`no Temporal server answered at ${address}; started a local dev server`);
    expect(logs[0]).toContain(`pid ${started[0].pid}`);
    expect(logs[0]).toContain(join(home, DEV_SERVER_FILES.log));
  });

  it('serves the HTTP API on the port it records, so the light commands can use it', async () => {
    const record = JSON.parse(readFileSync(join(home, DEV_SERVER_FILES.record), 'utf8'));
    expect(record).toMatchObject({ address, uiPort, httpPort: expect.any(Number) });
    expect(recordedHttpPort(home, address)).toBe(record.httpPort);
    expect(await isHttpApiReachable(`http://127.0.0.1:${record.httpPort}`, 5_000)).toBe(true);
  });

  it('registers goalrun search attributes', async () => {
    const connection = await Connection.connect({ address });
    try {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({
        namespace: 'default',
      });
      expect(customAttributes).toMatchObject({
        GoalStatus: INDEXED_VALUE_TYPE_KEYWORD,
        GoalSession: INDEXED_VALUE_TYPE_KEYWORD,
        GoalModel: INDEXED_VALUE_TYPE_KEYWORD,
        GoalIteration: INDEXED_VALUE_TYPE_INT,
      });
    } finally {
      await connection.close();
    }
  });

  it('serves the Web UI on the chosen port', async () => {
    const response = await fetch(`http://127.0.0.1:${uiPort}/`);
    expect(response.ok).toBe(true);
  });

  it('reuses a server that already answers', async () => {
    expect(await ensureTemporalServer({ address, home, log, uiPort })).toEqual({ started: false });
    expect(logs).toHaveLength(1);
  });

  it('will not start a foreground server where one already answers', async () => {
    await expect(runDevServerForeground({ home, address })).rejects.toThrow(
      /already answers at .*goalrun's background dev server, pid \d+/,
    );
    await expect(runDevServerForeground({ home, address: 'temporal.example:7233' })).rejects.toThrow(
      /not local/,
    );
  });

  it('stops the background server', async () => {
    expect(await stopBackgroundDevServer(home)).toBe(true);
    expect(await isTemporalReachable(address, 500)).toBe(false);
    expect(existsSync(join(home, DEV_SERVER_FILES.pid))).toBe(false);
    expect(await stopBackgroundDevServer(home)).toBe(false);
  });

  it('refuses to start a server for a non-local address', async () => {
    await expect(ensureTemporalServer({ address: '192.0.2.1:7233', home, log })).rejects.toThrow(
      /No Temporal server answers at 192\.0\.2\.1:7233/,
    );
  });
});

describe('startTestTemporalServer', { timeout: SERVER_TEST_TIMEOUT_MS }, () => {
  it('starts a throwaway server with dynamic config and stops it', async () => {
    const server = await startTestTemporalServer({
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 40 },
    });
    try {
      expect(server.namespace).toBe('default');
      expect(server.address).toBe(`127.0.0.1:${server.port}`);
      expect(await isTemporalReachable(server.address)).toBe(true);
      expect(await isHttpApiReachable(`http://${server.httpAddress}`, 5_000)).toBe(true);
    } finally {
      await server.stop();
    }
    expect(await isTemporalReachable(server.address, 500)).toBe(false);
    await server.stop();
  });
});
