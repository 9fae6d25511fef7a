/**
 * `goalrun down` (issue 26 §10): it stops the background Temporal dev server and the embedded store
 * goalrun started from its GOALRUN_HOME, refuses while a goal is open unless --force, and says so when
 * nothing runs. A private GOALRUN_HOME and a free port: the shared test server is never touched.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEV_SERVER_FILES,
  isTemporalReachable,
  recordDevServerAddress,
  stopBackgroundDevServer,
} from '../../cli/dev-server';
import { embeddedStoreStatus, stopEmbeddedStore } from '../../store/open';
import { isProcessAlive } from '../../system/processes';
import { cliEnv, runCli, scriptedModel, tempDir } from '../support/cli';
import { findFreePort } from '../support/temporal-server';

describe('goalrun down', () => {
  const home = tempDir('down-home');
  afterAll(async () => {
    await stopBackgroundDevServer(home);
    await stopEmbeddedStore(home);
  });

  it('stops the dev server and the store goalrun started, and refuses while a goal is open', async () => {
    const port = await findFreePort();
    const address = `127.0.0.1:${port}`;
    // goalrun starts a server by itself only at the default address or one `goalrun dev` served before.
    recordDevServerAddress(home, address);
    const env = cliEnv({ GOALRUN_HOME: home, TEMPORAL_ADDRESS: address, GOALRUN_TASK_QUEUE: undefined });
    expect(env.DATABASE_URL).toBeUndefined();

    const idle = await runCli(['down'], env);
    expect(idle.code, idle.stderr).toBe(0);
    expect(idle.stdout).toContain('nothing to stop');

    // A goal started with no worker: the dev server and the store start, and the goal stays open.
    const workspace = tempDir('down-ws');
    const model = scriptedModel(home, [
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'x' } }] },
    ]);
    const started = await runCli(
      ['start', 'wait here', '--workspace', workspace, '--model', model, '--json'],
      env,
      180_000,
    );
    expect(started.code, started.stderr).toBe(0);
    expect(started.stderr).toContain('goalrun down stops it and the embedded store');
    const { sessionId, shortId } = JSON.parse(started.stdout) as { sessionId: string; shortId: string };
    const serverPid = Number(fs.readFileSync(path.join(home, DEV_SERVER_FILES.pid), 'utf8'));
    const storePid = embeddedStoreStatus(home).pid!;
    expect(isProcessAlive(serverPid)).toBe(true);
    expect(isProcessAlive(storePid)).toBe(true);

    const refused = await runCli(['down'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('not stopping: 1 goal is open');
    expect(refused.stderr).toContain(`${shortId}  ${sessionId}`);
    expect(refused.stderr).toContain('--force');
    expect(isProcessAlive(serverPid)).toBe(true);
    expect(isProcessAlive(storePid)).toBe(true);

    const forced = await runCli(['down', '--force'], env);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain(
      `stopped the Temporal dev server goalrun started (pid ${serverPid}, ${address})`,
    );
    expect(forced.stdout).toContain(`stopped the embedded store (pid ${storePid},`);
    expect(isProcessAlive(serverPid)).toBe(false);
    expect(isProcessAlive(storePid)).toBe(false);
    expect(await isTemporalReachable(address)).toBe(false);
    expect(fs.existsSync(path.join(home, DEV_SERVER_FILES.pid))).toBe(false);

    const again = await runCli(['down', '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ stopped: { devServer: null, store: null } });

    const help = await runCli(['down', '--help'], env);
    expect(help.stdout).toContain('Open goals (running, waiting or paused) would halt mid-step');
  }, 300_000);
});
