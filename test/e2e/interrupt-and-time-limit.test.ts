/** Ctrl-C on `run` loses nothing and says what to do next; the time limit is a durable timer. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { killAndWait, runCli, scriptedModel, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';

describe('interrupting run', () => {
  it('stops following on Ctrl-C, says how to watch, resume or cancel, and the goal goes on', async () => {
    const t = goalTestEnv('ctrlc');
    const model = scriptedModel(t.home, [
      // Held until the test has a `resume` following it: the goal must still run when resume looks.
      {
        toolCalls: [
          { name: 'bash', args: { command: 'while [ ! -f release ]; do sleep 0.1; done; echo slow' } },
        ],
      },
      {
        toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done after the interruption' } }],
      },
    ]);
    const run = spawnCli(['run', 'be slow', '--workspace', t.workspace, '--model', model], t.env);
    await waitFor(
      'the goal to start',
      () => /step 1|goal \S+-\d{8}T|session \S+-\d{8}T/.test(run.output()),
      30_000,
      100,
    );
    const exited = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
    run.kill('SIGINT');
    expect(await exited).toBe(130);
    const output = run.output();
    expect(output).toMatch(/nothing is lost/);
    const sessionId = /goalrun resume (\S+)/.exec(output)?.[1];
    expect(sessionId).toBeTruthy();
    expect(output).toContain(`goalrun watch ${sessionId}`);
    expect(output).toContain(`goalrun cancel ${sessionId}`);

    // Another worker picks the goal up; resume attaches and follows it to the end. The goal's command
    // waits for a release file, written once resume shows it follows (a store worker takes a goal
    // over within seconds, which could otherwise end it before resume looks).
    const worker = spawnCli(['worker'], t.env);
    const resume = spawnCli(['resume', sessionId!, '--no-worker'], t.env);
    try {
      await waitFor(
        'resume to follow the goal',
        () => /is running; following it/.test(resume.output()),
        60_000,
        100,
      );
      fs.writeFileSync(path.join(t.workspace, 'release'), '');
      const code = await new Promise<number | null>((resolve) => {
        if (resume.exitCode !== null) resolve(resume.exitCode);
        else resume.once('exit', (exit) => resolve(exit));
      });
      expect(code, resume.output()).toBe(0);
      const shown = JSON.parse((await runCli(['status', sessionId!, '--json'], t.env)).stdout);
      expect(shown).toMatchObject({ status: 'completed', steps: 2 });
    } finally {
      await killAndWait(resume, 'SIGTERM');
      await killAndWait(worker, 'SIGTERM');
    }
  });
});

/** A sleep of 600 s that only this test file starts. */
const MARKER = `600.${process.pid}`;

describe('the time limit', () => {
  it('ends a goal stuck in a long command as limit_reached, killing the command', async () => {
    const t = goalTestEnv('timelimit');
    const model = scriptedModel(t.home, [
      { toolCalls: [{ name: 'bash', args: { command: `sleep ${MARKER}` } }] },
    ]);
    const result = await runCli(
      ['run', 'wait forever', '--workspace', t.workspace, '--model', model, '--max-minutes', '1', '--json'],
      t.env,
      150_000,
    );
    expect(result.code, result.stderr).toBe(4);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({
      status: 'limit_reached',
      reason: 'time limit reached (1 minute)',
      steps: 1,
    });
    // The command sleeps 600 s, so only the time limit can have ended the goal within the run's timeout.
    expect(status.elapsedMs).toBeGreaterThanOrEqual(60_000);
    // Found by command line: the command's own pid is inside the sandbox's PID namespace.
    const alive = fs.readdirSync('/proc').some((entry) => {
      try {
        return fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8') === `sleep\0${MARKER}\0`;
      } catch {
        return false;
      }
    });
    expect(alive).toBe(false);
  });
});
