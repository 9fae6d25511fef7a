/** Background jobs and worker shutdown, sandboxed and not, against real processes. */
import { existsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBash } from '../../activities/tools/bash';
import { jobKillTool, jobOutputTool } from '../../activities/tools/job-tools';
import { JobManager, KILLED_BY_SHUTDOWN_MESSAGE, SHUTTING_DOWN_MESSAGE } from '../../activities/tools/jobs';
import type { ToolContext } from '../../activities/tools/types';
import { FailureType } from '../../core/errors';
import { DEFAULT_SANDBOX, type SandboxSettings } from '../../core/sandbox-settings';
import {
  makeContext,
  makeWorkspace,
  processesWithMarker,
  removeWorkspace,
  sleepersWithMarker,
  TEST_SESSION,
  uniqueMarker,
} from './helpers';

const OFF: SandboxSettings = { ...DEFAULT_SANDBOX, mode: 'off' };

let workspace: string;
let jobs: JobManager;
beforeEach(async () => {
  workspace = await makeWorkspace();
  jobs = new JobManager({ killGraceMs: 300 });
});
afterEach(async () => {
  await jobs.killSession(TEST_SESSION);
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

describe.each([
  ['sandboxed', DEFAULT_SANDBOX],
  ['unsandboxed', OFF],
] as const)('background jobs, %s', (_name, sandbox) => {
  const context = (overrides: Partial<ToolContext> = {}) =>
    makeContext(workspace, { sandbox, jobs, ...overrides });

  it('starts a job and returns at once with its id and pid', async () => {
    // The job sleeps for longer than the test may run, so returning at all means bash did not wait for it.
    const marker = uniqueMarker();
    const outcome = await runBash(
      { command: `echo ready; sleep ${marker}`, run_in_background: true },
      context({ jobId: 'job-1' }),
    );
    expect(outcome.ok).toBe(true);
    expect(outcome.job).toMatchObject({ jobId: 'job-1', command: `echo ready; sleep ${marker}` });
    expect(outcome.job?.pid).toBeGreaterThan(0);
    expect(outcome.output).toMatch(/^started background job job-1: echo ready/);
    await until('the job to run', () => processesWithMarker(marker).length > 0);
    expect(jobs.list(TEST_SESSION)).toMatchObject([{ jobId: 'job-1', status: 'running' }]);
  });

  it('reads output by absolute offset while the job runs, with bash job_id and job-output', async () => {
    await runBash(
      { command: 'for i in 1 2 3; do echo line$i; sleep 0.1; done; sleep 300', run_in_background: true },
      context({ jobId: 'job-2' }),
    );
    await until(
      'three lines',
      () => (jobs.read(TEST_SESSION, 'job-2', 0, 1000)?.text.match(/line/g)?.length ?? 0) === 3,
    );
    const whole = await runBash({ job_id: 'job-2' }, context());
    expect(whole.output).toBe(
      'job=job-2 status=running offset=0 next_offset=18 (job still running; read again later for new output)\nline1\nline2\nline3\n',
    );
    const tail = await jobOutputTool.run({ job_id: 'job-2', offset: 12, limit: 100 }, context());
    expect(tail.output).toMatch(/offset=12 next_offset=18 .*\nline3\n$/);
    const page = await jobOutputTool.run({ job_id: 'job-2', offset: 0, limit: 6 }, context());
    expect(page.output).toBe('job=job-2 status=running offset=0 next_offset=6 (more available)\nline1\n');
  });

  it('job-output with wait_seconds answers once new output comes, or when the wait is up', async () => {
    await runBash(
      {
        command: 'echo first; sleep 1; echo late; sleep 300',
        run_in_background: true,
      },
      context({ jobId: 'job-w' }),
    );
    await until('the first line', () => (jobs.read(TEST_SESSION, 'job-w', 0, 100)?.nextOffset ?? 0) === 6);
    // Asked from past the first line: it waits for the late line (long before the 60 s are up).
    const started = Date.now();
    const late = await jobOutputTool.run({ job_id: 'job-w', offset: 6, wait_seconds: 60 }, context());
    expect(late.output).toContain('late');
    expect(Date.now() - started).toBeLessThan(60_000);
    // Nothing more comes: the wait ends at its deadline, with the job still running.
    const quiet = await jobOutputTool.run({ job_id: 'job-w', offset: 11, wait_seconds: 1 }, context());
    expect(quiet.output).toMatch(/^job=job-w status=running offset=11 /);
    expect(quiet.output.split('\n').slice(1)).toEqual(['']);
  });

  it('kills a job and everything it started; the status says so', async () => {
    const marker = uniqueMarker();
    await runBash(
      { command: `sleep ${marker} & sleep ${marker}`, run_in_background: true },
      context({ jobId: 'job-3' }),
    );
    await until('both sleeps', () => sleepersWithMarker(marker).length === 2);
    const killed = await jobKillTool.run({ job_id: 'job-3' }, context());
    expect(killed).toMatchObject({ ok: true, output: 'killed job-3', killedJobs: ['job-3'] });
    expect(processesWithMarker(marker)).toEqual([]);
    expect(jobs.list(TEST_SESSION)[0]).toMatchObject({ status: 'killed' });
    const again = await jobKillTool.run({ job_id: 'job-3' }, context());
    expect(again.output).toBe('job-3 was not running; nothing killed');
  });

  it('reports how a finished job exited', async () => {
    await runBash({ command: 'echo bye; exit 4', run_in_background: true }, context({ jobId: 'job-4' }));
    await until('the job to exit', () => jobs.list(TEST_SESSION)[0]?.status === 'exited');
    const read = await jobOutputTool.run({ job_id: 'job-4' }, context());
    expect(read.output).toBe(
      'job=job-4 status=exited (code 4) offset=0 next_offset=4 (end of output)\nbye\n',
    );
  });

  it('kills every job of a session when the goal ends, and only that session', async () => {
    const mine = uniqueMarker();
    const theirs = uniqueMarker();
    await runBash({ command: `sleep ${mine}`, run_in_background: true }, context({ jobId: 'job-1' }));
    await runBash({ command: `sleep ${mine}`, run_in_background: true }, context({ jobId: 'job-2' }));
    await runBash(
      { command: `sleep ${theirs}`, run_in_background: true },
      context({ jobId: 'job-1', sessionId: 'other-session' }),
    );
    await until(
      'three jobs',
      () => sleepersWithMarker(mine).length === 2 && sleepersWithMarker(theirs).length === 1,
    );
    expect((await jobs.killSession(TEST_SESSION)).sort()).toEqual(['job-1', 'job-2']);
    expect(processesWithMarker(mine)).toEqual([]);
    expect(sleepersWithMarker(theirs)).toHaveLength(1);
    expect(jobs.list(TEST_SESSION)).toEqual([]);
    await jobs.killSession('other-session');
    expect(processesWithMarker(theirs)).toEqual([]);
  });
});

describe('job bookkeeping', () => {
  const context = (overrides: Partial<ToolContext> = {}) => makeContext(workspace, { jobs, ...overrides });

  it('returns the running job when a start is retried with the same id', async () => {
    const marker = uniqueMarker();
    const command = `sleep ${marker}`;
    const first = await runBash({ command, run_in_background: true }, context({ jobId: 'job-7' }));
    const second = await runBash({ command, run_in_background: true }, context({ jobId: 'job-7' }));
    expect(second.job?.pid).toBe(first.job?.pid);
    expect(second.output).toContain('already running: this call was retried');
    await until('the job', () => sleepersWithMarker(marker).length === 1);
    await delay(200);
    expect(sleepersWithMarker(marker)).toHaveLength(1);
  });

  it('makes up an id when the workflow gives none', async () => {
    const outcome = await runBash({ command: 'true', run_in_background: true }, context());
    expect(outcome.job?.jobId).toMatch(/^job-[0-9a-f]{6}$/);
  });

  it('keeps only the last bytes of a chatty job and says what was dropped', async () => {
    const small = new JobManager({ bufferBytes: 100 });
    try {
      await runBash(
        { command: 'seq 1 1000', run_in_background: true },
        makeContext(workspace, { jobs: small, jobId: 'job-9' }),
      );
      await until('the job to exit', () => small.list(TEST_SESSION)[0]?.status === 'exited');
      const read = small.read(TEST_SESSION, 'job-9', 0, 1_000);
      expect(read).toMatchObject({ offset: 3793, nextOffset: 3893, dropped: 3793, more: false });
      expect(read?.text.endsWith('999\n1000\n')).toBe(true);
      const shown = await jobOutputTool.run({ job_id: 'job-9' }, makeContext(workspace, { jobs: small }));
      expect(shown.output.split('\n')[0]).toBe(
        '[3793 bytes before offset 3793 were dropped: a job keeps only the last 100 bytes of its output; reading from offset 3793]',
      );
    } finally {
      await small.killSession(TEST_SESSION);
    }
  });

  it('names the jobs it knows when asked for an unknown one', async () => {
    await runBash({ command: 'true', run_in_background: true }, context({ jobId: 'job-1' }));
    const outcome = await jobOutputTool.run({ job_id: 'job-99' }, context());
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(
      /^no background job job-99 in this goal on this host; jobs of this goal on this host: job-1 \[/,
    );
  });
});

describe('worker shutdown', () => {
  it('kills running commands and jobs, then refuses new tool calls with a retryable failure', async () => {
    const foreground = uniqueMarker();
    const background = uniqueMarker();
    const context = makeContext(workspace, { jobs });
    await runBash(
      { command: `sleep ${background}`, run_in_background: true },
      { ...context, jobId: 'job-1' },
    );
    // Caught at once: it rejects while shutdown() is awaited.
    const running = runBash({ command: `sleep ${foreground}` }, context).catch((error: unknown) => error);
    await until(
      'both processes',
      () => processesWithMarker(foreground).length > 0 && processesWithMarker(background).length > 0,
    );
    await jobs.shutdown();
    const failure = await running;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      type: FailureType.ToolHostShuttingDown,
      message: KILLED_BY_SHUTDOWN_MESSAGE,
      nonRetryable: false,
    });
    expect(processesWithMarker(foreground)).toEqual([]);
    expect(processesWithMarker(background)).toEqual([]);

    const refused = await runBash({ command: 'touch started.txt' }, context).catch((error: unknown) => error);
    expect(refused).toMatchObject({ type: FailureType.ToolHostShuttingDown, message: SHUTTING_DOWN_MESSAGE });
    const refusedJob = await runBash({ command: 'touch job.txt', run_in_background: true }, context).catch(
      (error: unknown) => error,
    );
    expect(refusedJob).toMatchObject({ type: FailureType.ToolHostShuttingDown });
    expect(existsSync(`${workspace}/started.txt`) || existsSync(`${workspace}/job.txt`)).toBe(false);
  });
});
