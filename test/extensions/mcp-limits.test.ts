/**
 * Issue 24 §7: an MCP stdio server runs under the same memory, process and CPU limits as a tool call.
 * A real server in the real sandbox reports the rlimits and cgroups the kernel gave it; one that
 * allocates past `sandbox.memory_mb` is killed, and the notice of its restart names the limit.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConfiguredServer } from '../../activities/extensions/extension-config';
import { McpHub } from '../../activities/extensions/mcp-hub';
import { sandboxHostFromEnv } from '../../activities/sandbox/host';
import { limitMechanism } from '../../activities/sandbox/resource-limits';
import { DEFAULT_SANDBOX } from '../../core/sandbox-settings';
import { tempDir } from '../support/cli';

const SCRIPT = path.resolve(__dirname, '../support/limits-mcp-server.js');
const LIMITS = { memoryMb: 192, maxProcesses: 48, cpuSeconds: 37 };

function textOf(result: { content: unknown }): string {
  return (result.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('\n');
}

describe('an MCP stdio server under the tools limits', () => {
  const hub = new McpHub();
  afterAll(() => hub.closeAll());
  const server: ConfiguredServer = {
    name: 'limits',
    config: { command: 'node', args: [SCRIPT] },
    source: 'config',
  };
  const run = {
    workspace: tempDir('mcp-limits-ws'),
    sessionId: `mcp-limits-${process.pid}`,
    sandbox: { ...DEFAULT_SANDBOX, limits: LIMITS },
    host: sandboxHostFromEnv(process.env),
    env: process.env,
  };
  const signal = new AbortController().signal;
  const noProgress = () => {};

  it('runs with the CPU-time rlimit of a tool call', async () => {
    const { connection } = await hub.connect(server, run);
    const said = textOf(await connection.callTool('limits', {}, { signal, onProgress: noProgress }));
    // RLIMIT_CPU: the limit, and 5 s more for the hard kill.
    expect(said).toMatch(/Max cpu time\s+37\s+42\s+seconds/);
    // Memory: the call's cgroup where this host has one (the sandbox's own cgroup namespace hides its
    // path; the next test sees it kill), else RLIMIT_DATA.
    if (!limitMechanism().memoryParent) expect(said).toMatch(/Max data size\s+201326592/);
  }, 60_000);

  it('is killed over sandbox.memory_mb, and its restart says so', async () => {
    const { connection } = await hub.connect(server, run);
    await expect(connection.callTool('hog', {}, { signal, onProgress: noProgress })).rejects.toThrow();
    const again = await hub.connect(server, run);
    expect(again.restarted).toMatch(/killed: over the sandbox memory limit \(sandbox\.memory_mb = 192\)/);
  }, 120_000);
});
