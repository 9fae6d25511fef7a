/**
 * Issue 19: a stdio MCP server that dies is started again on the next call, and the result says so
 * with how it ended. A real server process (test/support/crashing-mcp-server.js) in the real sandbox.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConfiguredServer } from '../../activities/extensions/extension-config';
import { McpHub } from '../../activities/extensions/mcp-hub';
import { sandboxHostFromEnv } from '../../activities/sandbox/host';
import { DEFAULT_SANDBOX } from '../../core/sandbox-settings';
import { tempDir } from '../support/cli';

const SCRIPT = path.resolve(__dirname, '../support/crashing-mcp-server.js');

describe('a stdio MCP server that dies', () => {
  const hub = new McpHub();
  afterAll(() => hub.closeAll());

  it('is started again on the next call, with a notice naming how it ended', async () => {
    const server: ConfiguredServer = {
      name: 'crashing',
      config: { command: 'node', args: [SCRIPT] },
      source: 'config',
    };
    const run = {
      workspace: tempDir('mcp-hub-ws'),
      sessionId: `hub-${process.pid}`,
      sandbox: DEFAULT_SANDBOX,
      host: sandboxHostFromEnv(process.env),
      env: process.env,
    };
    const signal = new AbortController().signal;
    const noProgress = () => {};
    const first = await hub.connect(server, run);
    expect(first.restarted).toBeUndefined();
    const pid = (await first.connection.callTool('instance', {}, { signal, onProgress: noProgress })).content;
    await expect(
      first.connection.callTool('crash', {}, { signal, onProgress: noProgress }),
    ).rejects.toThrow();
    // The same connection is not reused once its process is gone.
    expect(first.connection.alive).toBe(false);
    const again = await hub.connect(server, run);
    expect(again.restarted).toMatch(
      /MCP server "crashing" had stopped \(exit code 3; stderr: crashing on purpose\)/,
    );
    const echoed = await again.connection.callTool(
      'echo',
      { text: 'back' },
      { signal, onProgress: noProgress },
    );
    expect(echoed.content).toEqual([{ type: 'text', text: 'echo: back' }]);
    const newPid = (await again.connection.callTool('instance', {}, { signal, onProgress: noProgress }))
      .content;
    expect(newPid).not.toEqual(pid);
    // The next call of a running server needs no restart.
    expect((await hub.connect(server, run)).restarted).toBeUndefined();
  }, 60_000);
});
