/** Acceptance 10: `goalrun demo` succeeds with no DATABASE_URL and no running Temporal server. */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordDevServerAddress, stopBackgroundDevServer } from '../../cli/dev-server';
import { stopEmbeddedStore } from '../../store/open';
import { cliEnv, runCli, tempDir } from '../support/cli';
import { findFreePort } from '../support/temporal-server';

describe('goalrun demo', () => {
  const home = tempDir('demo-home');
  afterAll(async () => {
    await stopBackgroundDevServer(home);
    await stopEmbeddedStore(home);
  });

  it('runs on the embedded defaults, starting its own Temporal dev server', async () => {
    const port = await findFreePort();
    // A free port, not the default 7233 (shared machines): goalrun starts a server by itself only at
    // the default address or one `goalrun dev` served before, which is what this records.
    recordDevServerAddress(home, `127.0.0.1:${port}`);
    const env = cliEnv({
      GOALRUN_HOME: home,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      GOALRUN_TASK_QUEUE: undefined,
    });
    expect(env.DATABASE_URL).toBeUndefined();
    const result = await runCli(['demo'], env, 150_000);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /no Temporal server answered at 127\.0\.0\.1:\d+; started a local dev server/,
    );
    expect(result.stdout).toMatch(/store: embedded PostgreSQL at /);
    expect(result.stdout).toMatch(/goal completed — 6 steps/);
    // Its closing lines say how to stop what it left running (issue 26 §10).
    expect(result.stdout).toMatch(/when you are done: goalrun down\b/);
    // The demo's workspace holds what the scripted model built.
    const demoDir = path.join(home, 'demo');
    const workspace = fs
      .readdirSync(demoDir)
      .map((name) => path.join(demoDir, name))
      .find((entry) => fs.statSync(entry).isDirectory());
    expect(fs.readFileSync(path.join(workspace!, 'greeting.txt'), 'utf8')).toBe('Hello, goalrun\n');

    // The embedded store keeps the session; list reads it after the demo's process is gone.
    const listed = await runCli(['list', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ status: 'completed', steps: 6 }]);
  });
});
