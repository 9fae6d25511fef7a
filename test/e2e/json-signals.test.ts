/**
 * Issue 7, acceptance 6: `--json` output is clean. Ctrl-C during `run --json` prints one JSON status
 * object on stdout and nothing else (the advice goes to stderr), and exits 130; SIGTERM exits 143.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, scriptedModel, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';

/** The command holds the goal in step 1 until the test writes this file (or 10 minutes pass). */
const RELEASE = 'release';

const slowGoal = [
  {
    toolCalls: [
      {
        name: 'bash',
        args: {
          command: `echo started > started.txt; for i in $(seq 1 3000); do [ -e ${RELEASE} ] && break; sleep 0.2; done`,
        },
      },
    ],
  },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'slow but done' } }] },
];

/** Starts `run`, waits until its command runs, sends `signal`, and returns what it printed. */
async function interruptRun(name: string, signal: NodeJS.Signals, extra: string[]) {
  const t = goalTestEnv(name);
  const run = spawnCli(
    ['run', 'be slow', '--workspace', t.workspace, '--model', scriptedModel(t.home, slowGoal), ...extra],
    t.env,
  );
  let stdout = '';
  let stderr = '';
  run.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  run.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
  await waitFor(
    'the command to run',
    () => fs.existsSync(path.join(t.workspace, 'started.txt')),
    60_000,
    100,
  );
  run.kill(signal);
  // The goal stays in step 1 until the run has said where it stopped following, however slow the
  // machine; then its command may end, so the run's worker shuts down without waiting out its grace.
  await waitFor(
    'the run to stop following',
    () => `${stdout}${stderr}`.includes('Stopped following'),
    60_000,
    100,
  );
  fs.writeFileSync(path.join(t.workspace, RELEASE), '');
  const code = await exited;
  return { t, code, stdout, stderr };
}

describe('--json and signals', () => {
  it('Ctrl-C during run --json prints exactly one status object on stdout and exits 130', async () => {
    const { t, code, stdout, stderr } = await interruptRun('jsonint', 'SIGINT', ['--json']);
    expect(code).toBe(130);
    const status = JSON.parse(stdout);
    expect(status).toMatchObject({ status: 'running', steps: 1 });
    expect(typeof status.sessionId).toBe('string');
    expect(stdout.trim().startsWith('{') && stdout.trim().endsWith('}')).toBe(true);
    expect(stderr).toContain('Stopped following');
    expect(stderr).toContain(`goalrun resume ${status.sessionId}`);
    // The goal went on; status confirms it exists.
    const shown = await runCli(['status', status.sessionId, '--json'], t.env);
    expect(JSON.parse(shown.stdout).sessionId).toBe(status.sessionId);
  });

  it('SIGTERM stops following with exit code 143, saying how to go on', async () => {
    const { code, stdout } = await interruptRun('term', 'SIGTERM', []);
    expect(code).toBe(143);
    expect(stdout).toContain('Stopped following. The goal keeps its state in Temporal; nothing is lost.');
    expect(stdout).toMatch(/goalrun resume \S+/);
  });
});
