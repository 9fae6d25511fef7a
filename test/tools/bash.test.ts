import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool, runBash, summarizeBash } from '../../activities/tools/bash';
import { HeadTailBuffer } from '../../activities/tools/head-tail-buffer';
import { DEFAULT_SANDBOX, type SandboxSettings } from '../../core/sandbox-settings';
import {
  groupExists,
  makeContext,
  makeWorkspace,
  processExists,
  processesWithMarker,
  removeWorkspace,
  uniqueMarker,
} from './helpers';

let workspace: string;
beforeEach(async () => {
  workspace = await makeWorkspace();
});
afterEach(async () => {
  await removeWorkspace(workspace);
});

const readPid = (file: string) => Number(readFileSync(path.join(workspace, file), 'utf8').trim());

/** No sandbox: the process-group checks below can use host pids. */
const OFF: SandboxSettings = { ...DEFAULT_SANDBOX, mode: 'off' };

/** A command tree found from outside by its marker: a background sleep and a foreground one. */
const treeCommand = (marker: string) => `echo $$ > pgid; sleep ${marker} & echo $! > bgpid; sleep ${marker}`;

/** Waits until a process with the marker runs (or fails after a while). */
async function waitForMarker(marker: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (processesWithMarker(marker).length === 0) {
    if (Date.now() > deadline) throw new Error(`no process with ${marker} appeared`);
    await delay(20);
  }
}

describe.each([
  ['sandboxed (default)', DEFAULT_SANDBOX],
  ['unsandboxed (off)', OFF],
] as const)('bash tool, %s', (_name, sandbox) => {
  const context = (overrides: Parameters<typeof makeContext>[1] = {}) =>
    makeContext(workspace, { sandbox, ...overrides });

  it('reports exit code 0 as ok', async () => {
    const outcome = await bashTool.run({ command: 'echo hello' }, context());
    expect(outcome).toEqual({ ok: true, output: 'hello\n[exit code 0]', changedWorkspace: true });
  });

  it('reports a non-zero exit code as not ok', async () => {
    const outcome = await bashTool.run({ command: 'echo oops >&2; exit 3' }, context());
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toBe('oops\n[exit code 3]');
  });

  it('reports death by signal', async () => {
    const outcome = await bashTool.run({ command: 'kill -KILL $$' }, context());
    expect(outcome.ok).toBe(false);
    // Unsandboxed Node sees the signal; bwrap reports its command's death as 128+9.
    expect(outcome.output).toMatch(
      /^\[(killed by signal SIGKILL|exit code 137, i\.e\. killed by SIGKILL)\]$/,
    );
  });

  it('combines stdout and stderr in the order they were written', async () => {
    const command = 'for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done';
    const outcome = await bashTool.run({ command }, context());
    expect(outcome.output).toBe('out1\nerr1\nout2\nerr2\nout3\nerr3\nout4\nerr4\nout5\nerr5\n[exit code 0]');
  });

  it('runs in the workspace with stdin closed', async () => {
    const outcome = await bashTool.run({ command: 'pwd; cat; echo after-cat' }, context());
    expect(outcome.output).toBe(`${workspace}\nafter-cat\n[exit code 0]`);
  });

  it('adds a newline before the status line when output lacks one', async () => {
    const outcome = await bashTool.run({ command: 'printf abc' }, context());
    expect(outcome.output).toBe('abc\n[exit code 0]');
  });

  it('fails clearly when the workspace does not exist', async () => {
    const missing = makeContext(path.join(workspace, 'missing'), { sandbox });
    const outcome = await bashTool.run({ command: 'true' }, missing);
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toContain('workspace directory does not exist');
  });

  it('kills the whole tree on timeout and waits until it is gone', async () => {
    const marker = uniqueMarker();
    const started = Date.now();
    const outcome = await bashTool.run({ command: treeCommand(marker), timeout_ms: 500 }, context());
    const elapsed = Date.now() - started;
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(/\[timed out after 500 ms; process group killed\]$/);
    expect(elapsed).toBeGreaterThanOrEqual(500);
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it('escalates to SIGKILL when the tree ignores SIGTERM', async () => {
    const marker = uniqueMarker();
    // An ignored signal stays ignored across exec, so the sleeps ignore SIGTERM too.
    const command = `trap '' TERM; ${treeCommand(marker)}`;
    const outcome = await runBash({ command, timeout_ms: 300 }, context(), { killGraceMs: 300 });
    expect(outcome.output).toMatch(/\[timed out after 300 ms; process group killed\]$/);
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it('kills the tree and rejects with AbortError when the signal aborts', async () => {
    const marker = uniqueMarker();
    const controller = new AbortController();
    const running = bashTool.run({ command: treeCommand(marker) }, context({ signal: controller.signal }));
    await waitForMarker(marker);
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it("rethrows the signal's reason when it is an Error", async () => {
    const marker = uniqueMarker();
    const controller = new AbortController();
    const reason = new Error('activity cancelled');
    const running = bashTool.run({ command: treeCommand(marker) }, context({ signal: controller.signal }));
    await waitForMarker(marker);
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it('rejects without running anything when already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      bashTool.run({ command: 'touch ran' }, context({ signal: controller.signal })),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(existsSync(path.join(workspace, 'ran'))).toBe(false);
  });

  it('kills background processes left behind by a finished command', async () => {
    const marker = uniqueMarker();
    const outcome = await bashTool.run({ command: `sleep ${marker} & echo done` }, context());
    expect(outcome.ok).toBe(true);
    expect(outcome.output).toMatch(/^done\n/);
    expect(outcome.output).toMatch(/\[exit code 0\]$/);
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it('heartbeats while the command runs', async () => {
    const beats: unknown[] = [];
    await bashTool.run({ command: 'sleep 2.2' }, context({ heartbeat: (details) => beats.push(details) }));
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats[0]).toMatchObject({ outputBytes: 0 });
  });

  it('passes only allow-listed variables, never secret-looking ones even when asked for', async () => {
    const planted = {
      OPENAI_API_KEY: 'sk-openai-planted',
      ANTHROPIC_API_KEY: 'sk-anthropic-planted',
      MY_SERVICE_TOKEN: 'planted-token',
      APP_SECRET: 'planted-secret',
      PGPASSWORD: 'planted-password',
      DATABASE_URL: 'postgres://u:planted-db@h/db',
      TEMPORAL_ADDRESS: 'planted-temporal:7233',
      GOALRUN_TASK_QUEUE: 'planted-queue',
    };
    const saved = { ...process.env };
    Object.assign(process.env, planted, {
      GOALRUN_TEST_LISTED: 'no',
      PROJECT_FLAG: 'listed-value',
      UNLISTED_WORKER_VAR: 'planted-unlisted',
    });
    try {
      const asked = { ...sandbox, env: [...Object.keys(planted), 'PROJECT_FLAG', 'GOALRUN_TEST_LISTED'] };
      const outcome = await bashTool.run({ command: 'env' }, context({ sandbox: asked }));
      expect(outcome.output).toContain('PROJECT_FLAG=listed-value');
      expect(outcome.output).toMatch(/^PATH=/m);
      for (const [name, value] of Object.entries(planted)) {
        expect(outcome.output).not.toContain(`${name}=`);
        expect(outcome.output).not.toContain(value);
      }
      expect(outcome.output).not.toContain('GOALRUN_TEST_LISTED');
      expect(outcome.output).not.toContain('planted-unlisted');
    } finally {
      for (const name of [
        ...Object.keys(planted),
        'GOALRUN_TEST_LISTED',
        'PROJECT_FLAG',
        'UNLISTED_WORKER_VAR',
      ]) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
  });

  it('keeps the head and tail of oversized output and says how much was dropped', async () => {
    const full = Array.from({ length: 2_000 }, (_, index) => `${index + 1}\n`).join('');
    const cap = 1_000;
    const outcome = await runBash({ command: 'seq 1 2000' }, context(), { outputCapBytes: cap });
    const dropped = full.length - cap;
    expect(outcome.ok).toBe(true);
    expect(outcome.output.startsWith(full.slice(0, cap / 2))).toBe(true);
    expect(outcome.output).toContain(`[... ${dropped} bytes of output dropped ...]`);
    expect(outcome.output.endsWith(`${full.slice(-cap / 2)}[exit code 0]`)).toBe(true);
  });
});

describe('bash tool without a sandbox: process groups', () => {
  const TREE_COMMAND = 'echo $$ > pgid; sleep 300 & echo $! > bgpid; sleep 300';

  it('kills the whole process group on timeout', async () => {
    const outcome = await bashTool.run(
      { command: TREE_COMMAND, timeout_ms: 500 },
      makeContext(workspace, { sandbox: OFF }),
    );
    expect(outcome.output).toMatch(/\[timed out after 500 ms; process group killed\]$/);
    const pgid = readPid('pgid');
    expect(() => process.kill(-pgid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    expect(groupExists(pgid)).toBe(false);
    expect(processExists(readPid('bgpid'))).toBe(false);
  });

  it('says when it killed what a finished command left running', async () => {
    const outcome = await bashTool.run(
      { command: 'sleep 300 & echo $! > bgpid; echo done' },
      makeContext(workspace, { sandbox: OFF }),
    );
    expect(outcome.output).toBe(
      'done\n[background processes the command left running were killed]\n[exit code 0]',
    );
    expect(processExists(readPid('bgpid'))).toBe(false);
  });
});

describe('bash helpers', () => {
  it('summarizes the first line of the command, clipped', () => {
    expect(summarizeBash({ command: 'npm test\nnpm run lint' })).toBe('bash: npm test');
    expect(summarizeBash({ command: 'npm run dev', run_in_background: true })).toBe('bash &: npm run dev');
    expect(summarizeBash({ job_id: 'job-2', offset: 10 })).toBe('bash: read job-2 output');
    const long = `echo ${'x'.repeat(100)}`;
    const summary = summarizeBash({ command: long });
    expect(summary.length).toBe('bash: '.length + 60);
    expect(summary.endsWith('…')).toBe(true);
  });
});

describe('HeadTailBuffer', () => {
  it('keeps everything under the cap', () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push(Buffer.from('abc'));
    buffer.push(Buffer.from('def'));
    expect(buffer.text()).toBe('abcdef');
    expect(buffer.droppedBytes).toBe(0);
  });

  it('keeps the head and the tail across many chunks', () => {
    const buffer = new HeadTailBuffer(6);
    for (const chunk of ['ab', 'cd', 'ef', 'gh', 'ij', 'kl']) buffer.push(Buffer.from(chunk));
    expect(buffer.totalBytes).toBe(12);
    expect(buffer.droppedBytes).toBe(6);
    expect(buffer.text()).toBe('abc\n[... 6 bytes of output dropped ...]\njkl');
  });

  it('handles one chunk larger than the cap', () => {
    const buffer = new HeadTailBuffer(4);
    buffer.push(Buffer.from('0123456789'));
    expect(buffer.text()).toBe('01\n[... 6 bytes of output dropped ...]\n89');
  });
});
