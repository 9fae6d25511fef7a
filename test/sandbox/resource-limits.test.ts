/**
 * Resource limits of a tool call, with real bubblewrap and the mechanism this machine has (cgroups
 * where the worker may create them, else rlimits): a memory hog, a fork bomb and a CPU spinner are
 * stopped with a result naming the limit, while this process (the worker) and another goal's
 * commands keep running. The fork bomb bounds itself (depth and time), so a broken limit cannot
 * take the shared machine down.
 */
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectLimitMechanism } from '../../activities/sandbox/resource-limits';
import { bashTool } from '../../activities/tools/bash';
import { DEFAULT_RESOURCE_LIMITS, DEFAULT_SANDBOX, type ResourceLimits } from '../../core/sandbox-settings';
import { makeContext, makeWorkspace, removeWorkspace } from '../tools/helpers';

const mechanism = detectLimitMechanism();
let workspace: string;
beforeAll(async () => {
  workspace = await makeWorkspace();
});
afterAll(async () => {
  await removeWorkspace(workspace);
});

function limited(limits: Partial<ResourceLimits>, sessionId?: string) {
  return makeContext(workspace, {
    ...(sessionId ? { sessionId } : {}),
    sandbox: { ...DEFAULT_SANDBOX, limits: { ...DEFAULT_RESOURCE_LIMITS, ...limits } },
  });
}

/** Call cgroups of this process still on disk. */
function leftoverCgroups(): string[] {
  return [mechanism.memoryParent, mechanism.pidsParent]
    .filter((dir): dir is string => dir !== undefined)
    .flatMap((dir) => readdirSync(dir).filter((name) => name.startsWith(`call-${process.pid}-`)));
}

describe('resource limits of a tool call', () => {
  it(`has a mechanism for every limit here (${JSON.stringify(mechanism)})`, () => {
    expect(mechanism.prlimit).not.toBeNull();
    expect(mechanism.memoryParent !== undefined || mechanism.prlimit !== null).toBe(true);
    expect(mechanism.pidsParent !== undefined || mechanism.nprocApplies).toBe(true);
  });

  it('runs an ordinary command under the default limits and removes its cgroups', async () => {
    const outcome = await bashTool.run({ command: 'echo fine; ls /proc/self/ > /dev/null' }, limited({}));
    expect(outcome.output).toBe('fine\n[exit code 0]');
    expect(leftoverCgroups()).toEqual([]);
  });

  it('stops a memory hog and names sandbox.memory_mb', async () => {
    // `tail` keeps a whole line in memory: 1 GiB of zero bytes without a newline.
    const outcome = await bashTool.run(
      { command: 'head -c 1G /dev/zero | tail; echo after' },
      limited({ memoryMb: 64 }),
    );
    expect(outcome.ok).toBe(false);
    if (mechanism.memoryParent) {
      expect(outcome.output).toContain('[killed: over the sandbox memory limit (sandbox.memory_mb = 64)]');
    } else {
      expect(outcome.output).toMatch(/memory exhausted|Cannot allocate memory/);
    }
  });

  it('stops a fork bomb, names sandbox.max_processes, and another goal and the worker keep running', async () => {
    // At most 2^10 processes, each gone after 20 s, even if no limit held.
    const bomb =
      'bomb() { [ "$1" -ge 10 ] && { sleep 20; return; }; bomb $(($1+1)) & bomb $(($1+1)) & wait; }; bomb 0';
    const started = Date.now();
    const bombing = bashTool.run(
      { command: bomb, timeout_ms: 60_000 },
      limited({ maxProcesses: 64 }, 'bomb-goal'),
    );
    // Another goal's command, while the bomb runs: answered at once.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const otherStarted = Date.now();
    const other = await bashTool.run({ command: 'echo other goal alive' }, limited({}, 'other-goal'));
    expect(other.output).toBe('other goal alive\n[exit code 0]');
    expect(Date.now() - otherStarted).toBeLessThan(10_000);
    const outcome = await bombing;
    expect(outcome.ok).toBe(false);
    if (mechanism.pidsParent) {
      expect(outcome.output).toContain(
        '[killed: over the sandbox process limit (sandbox.max_processes = 64); new processes were refused]',
      );
      // Killed when the limit was hit, not left to spin until its own end.
      expect(Date.now() - started).toBeLessThan(15_000);
    } else {
      expect(outcome.output).toMatch(/Resource temporarily unavailable|fork/);
    }
    expect(leftoverCgroups()).toEqual([]);
  });

  it('stops a CPU spinner and names sandbox.cpu_seconds', async () => {
    const outcome = await bashTool.run(
      { command: 'while :; do :; done', timeout_ms: 30_000 },
      limited({ cpuSeconds: 1 }),
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toContain('[killed: over the sandbox CPU-time limit (sandbox.cpu_seconds = 1)]');
  });
});
