import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool, isSecretEnvName, runBash, scrubEnv, summarizeBash } from '../../activities/tools/bash';
import { HeadTailBuffer } from '../../activities/tools/head-tail-buffer';
import { groupExists, makeContext, makeWorkspace, processExists, removeWorkspace } from './helpers';

let workspace: string;
beforeEach(async () => {
  workspace = await makeWorkspace();
});
afterEach(async () => {
  await removeWorkspace(workspace);
});

/** Waits until the command has written its pid files, so a kill can be checked against them. */
async function waitForFile(file: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(file) || readFileSync(file, 'utf8').trim() === '') {
    if (Date.now() > deadline) throw new Error(`${file} never appeared`);
    await delay(20);
  }
}

const readPid = (file: string) => Number(readFileSync(path.join(workspace, file), 'utf8').trim());

/** Records the group (the inner bash is its leader) and a background child, then blocks in the foreground. */
const TREE_COMMAND = 'echo $$ > pgid; sleep 300 & echo $! > bgpid; sleep 300';

describe('bash tool', () => {
  it('reports exit code 0 as ok', async () => {
    const outcome = await bashTool.run({ command: 'echo hello' }, makeContext(workspace));
    expect(outcome).toEqual({ ok: true, output: 'hello\n[exit code 0]', changedWorkspace: true });
  });

  it('reports a non-zero exit code as not ok', async () => {
    const outcome = await bashTool.run({ command: 'echo oops >&2; exit 3' }, makeContext(workspace));
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toBe('oops\n[exit code 3]');
  });

  it('reports death by signal', async () => {
    const outcome = await bashTool.run({ command: 'kill -KILL $$' }, makeContext(workspace));
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toBe('[killed by signal SIGKILL]');
  });

  it('combines stdout and stderr in the order they were written', async () => {
    const command = 'for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done';
    const outcome = await bashTool.run({ command }, makeContext(workspace));
    expect(outcome.output).toBe('out1\nerr1\nout2\nerr2\nout3\nerr3\nout4\nerr4\nout5\nerr5\n[exit code 0]');
  });

  it('runs in the workspace with stdin closed', async () => {
    const outcome = await bashTool.run({ command: 'pwd; cat; echo after-cat' }, makeContext(workspace));
    expect(outcome.output).toBe(`${workspace}\nafter-cat\n[exit code 0]`);
  });

  it('adds a newline before the status line when output lacks one', async () => {
    const outcome = await bashTool.run({ command: 'printf abc' }, makeContext(workspace));
    expect(outcome.output).toBe('abc\n[exit code 0]');
  });

  it('fails clearly when the workspace does not exist', async () => {
    const outcome = await bashTool.run({ command: 'true' }, makeContext(path.join(workspace, 'missing')));
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toContain('workspace directory does not exist');
  });

  it('kills the whole process group on timeout and waits until it is gone', async () => {
    const started = Date.now();
    const outcome = await bashTool.run({ command: TREE_COMMAND, timeout_ms: 500 }, makeContext(workspace));
    const elapsed = Date.now() - started;
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(/\[timed out after 500 ms; process group killed\]$/);
    expect(elapsed).toBeGreaterThanOrEqual(500);
    expect(elapsed).toBeLessThan(4_000);
    const pgid = readPid('pgid');
    expect(() => process.kill(-pgid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    expect(processExists(readPid('bgpid'))).toBe(false);
  });

  it('escalates to SIGKILL when the group ignores SIGTERM', async () => {
    // An ignored signal stays ignored across exec, so the sleeps ignore SIGTERM too.
    const command = `trap '' TERM; ${TREE_COMMAND}`;
    const outcome = await runBash({ command, timeout_ms: 300 }, makeContext(workspace), { killGraceMs: 300 });
    expect(outcome.output).toMatch(/\[timed out after 300 ms; process group killed\]$/);
    expect(groupExists(readPid('pgid'))).toBe(false);
    expect(processExists(readPid('bgpid'))).toBe(false);
  });

  it('kills the group and rejects with AbortError when the signal aborts', async () => {
    const controller = new AbortController();
    const running = bashTool.run(
      { command: TREE_COMMAND },
      makeContext(workspace, { signal: controller.signal }),
    );
    await waitForFile(path.join(workspace, 'bgpid'));
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(groupExists(readPid('pgid'))).toBe(false);
    expect(processExists(readPid('bgpid'))).toBe(false);
  });

  it("rethrows the signal's reason when it is an Error", async () => {
    const controller = new AbortController();
    const reason = new Error('activity cancelled');
    const running = bashTool.run(
      { command: TREE_COMMAND },
      makeContext(workspace, { signal: controller.signal }),
    );
    await waitForFile(path.join(workspace, 'bgpid'));
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(groupExists(readPid('pgid'))).toBe(false);
  });

  it('rejects without running anything when already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const context = makeContext(workspace, { signal: controller.signal });
    await expect(bashTool.run({ command: 'touch ran' }, context)).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(existsSync(path.join(workspace, 'ran'))).toBe(false);
  });

  it('kills background processes left behind by a finished command', async () => {
    const outcome = await bashTool.run(
      { command: 'sleep 300 & echo $! > bgpid; echo done' },
      makeContext(workspace),
    );
    expect(outcome.ok).toBe(true);
    expect(outcome.output).toBe(
      'done\n[background processes the command left running were killed]\n[exit code 0]',
    );
    expect(processExists(readPid('bgpid'))).toBe(false);
  });

  it('heartbeats while the command runs', async () => {
    const beats: unknown[] = [];
    const context = makeContext(workspace, { heartbeat: (details) => beats.push(details) });
    await bashTool.run({ command: 'sleep 2.2' }, context);
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats[0]).toMatchObject({ outputBytes: 0 });
  });

  it('keeps secrets out of the environment', async () => {
    const secrets = {
      OPENAI_API_KEY: 'sk-openai',
      ANTHROPIC_API_KEY: 'sk-anthropic',
      GOALRUN_TEST_API_KEY: 'k1',
      GOALRUN_TEST_TOKEN: 't1',
      GOALRUN_TEST_SECRET: 's1',
      GOALRUN_TEST_PASSWORD: 'p1',
    };
    const saved = { ...process.env };
    Object.assign(process.env, secrets, { GOALRUN_TEST_VISIBLE: 'visible' });
    try {
      const outcome = await bashTool.run({ command: 'env' }, makeContext(workspace));
      expect(outcome.output).toContain('GOALRUN_TEST_VISIBLE=visible');
      for (const [name, value] of Object.entries(secrets)) {
        expect(outcome.output).not.toContain(name);
        expect(outcome.output).not.toContain(value);
      }
    } finally {
      for (const name of [...Object.keys(secrets), 'GOALRUN_TEST_VISIBLE']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
  });

  it('keeps the head and tail of oversized output and says how much was dropped', async () => {
    const full = Array.from({ length: 2_000 }, (_, index) => `${index + 1}\n`).join('');
    const cap = 1_000;
    const outcome = await runBash({ command: 'seq 1 2000' }, makeContext(workspace), { outputCapBytes: cap });
    const dropped = full.length - cap;
    expect(outcome.ok).toBe(true);
    expect(outcome.output.startsWith(full.slice(0, cap / 2))).toBe(true);
    expect(outcome.output).toContain(`[... ${dropped} bytes of output dropped ...]`);
    expect(outcome.output.endsWith(`${full.slice(-cap / 2)}[exit code 0]`)).toBe(true);
  });
});

describe('bash helpers', () => {
  it('recognises secret variable names', () => {
    for (const name of [
      'OPENAI_API_KEY',
      'ANTHROPIC_API_KEY',
      'X_API_KEY',
      'GITHUB_TOKEN',
      'APP_SECRET',
      'PGPASSWORD',
    ]) {
      expect(isSecretEnvName(name), name).toBe(true);
    }
    for (const name of ['PATH', 'HOME', 'TOKEN_URL', 'NODE_ENV'])
      expect(isSecretEnvName(name), name).toBe(false);
    expect(scrubEnv({ PATH: '/bin', NPM_TOKEN: 'x' })).toEqual({ PATH: '/bin' });
  });

  it('summarizes the first line of the command, clipped', () => {
    expect(summarizeBash({ command: 'npm test\nnpm run lint' })).toBe('bash: npm test');
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
