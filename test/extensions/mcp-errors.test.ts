/**
 * Issue 26 §4: an MCP server that cannot start says why. Real servers in the real sandbox:
 * - one installed under /tmp (the sandbox's /tmp is its own) fails with the first `Error:` line of
 *   its stderr (not `Node.js v20…`, its last) and a sentence saying the sandbox cannot see /tmp; doctor
 *   shows up to 20 lines of what it said;
 * - `npx -y <package>` without the network says it needs the network or a preinstalled server, and
 *   does so long before the 60 s start timeout.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConfiguredServer } from '../../activities/extensions/extension-config';
import { MCP_CONNECT_TIMEOUT_MS } from '../../activities/extensions/mcp-connection';
import { McpHub } from '../../activities/extensions/mcp-hub';
import { DOCTOR_STDERR_LINES, ServerStderr } from '../../activities/extensions/server-stderr';
import { sandboxHostFromEnv } from '../../activities/sandbox/host';
import { DEFAULT_SANDBOX } from '../../core/sandbox-settings';
import { cliEnv, runCli, tempDir } from '../support/cli';

/** What node prints for a missing module: the cause in the middle, the version last. */
const NODE_MISSING_MODULE = `node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module '/tmp/srv/index.js'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
    at Module._load (node:internal/modules/cjs/loader:1051:27)
{
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.20.2
`;

describe('what a failed MCP server said', () => {
  it('is its first error line, not its last line; a report gets up to 20 lines', () => {
    const stderr = new ServerStderr();
    // In pieces, as a pipe delivers it.
    for (const piece of NODE_MISSING_MODULE.match(/[\s\S]{1,17}/g) ?? []) stderr.append(piece);
    expect(stderr.firstError()).toBe("Error: Cannot find module '/tmp/srv/index.js'");
    expect(stderr.summary()).toBe("Error: Cannot find module '/tmp/srv/index.js'");
    const python = new ServerStderr();
    python.append(
      'Traceback (most recent call last):\n  File "x.py", line 1\nModuleNotFoundError: No module named \'mcp\'\n',
    );
    expect(python.firstError()).toBe("ModuleNotFoundError: No module named 'mcp'");
    const npm = new ServerStderr();
    npm.append('npm error code EAI_AGAIN\nnpm error network request failed\n');
    expect(npm.firstError()).toBe('npm error code EAI_AGAIN');
    const quiet = new ServerStderr();
    quiet.append('starting\nlistening\nbye\n');
    expect(quiet.firstError()).toBeNull();
    expect(quiet.summary()).toBe('starting | listening | bye');
    const long = new ServerStderr();
    long.append(Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n'));
    expect(long.excerpt()).toHaveLength(DOCTOR_STDERR_LINES);
  });
});

describe('an MCP server the sandbox cannot start', () => {
  const hub = new McpHub();
  afterAll(() => hub.closeAll());
  const run = (workspace: string) => ({
    workspace,
    sessionId: `mcp-errors-${process.pid}-${path.basename(workspace)}`,
    sandbox: DEFAULT_SANDBOX,
    host: sandboxHostFromEnv(process.env),
    env: process.env,
  });

  it('installed under /tmp: says the sandbox cannot see it, with the first Error line', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-mcp-in-tmp-'));
    const entry = path.join(dir, 'index.js');
    fs.writeFileSync(entry, 'console.log("never runs in the sandbox")\n');
    const server: ConfiguredServer = {
      name: 'intmp',
      config: { command: 'node', args: [entry] },
      source: 'config',
    };
    const error = await hub.connect(server, run(tempDir('mcp-errors-ws'))).then(
      () => null,
      (err: Error) => err,
    );
    expect(error?.message).toContain(
      `${entry} is under /tmp, which the sandbox replaces with a private, empty one`,
    );
    expect(error?.message).toContain(`stderr: Error: Cannot find module '${entry}'`);
    expect(error?.message).not.toMatch(/stderr: .*Node\.js v/);

    // doctor shows what it said, up to 20 lines, under the server's line.
    const home = tempDir('mcp-errors-home');
    const config = path.join(tempDir('mcp-errors-config'), 'mcp.json');
    fs.writeFileSync(config, JSON.stringify({ mcpServers: { intmp: { command: 'node', args: [entry] } } }));
    const doctor = await runCli(
      ['doctor', '--mcp-config', config, '--workspace', tempDir('mcp-errors-ws2')],
      cliEnv({ GOALRUN_HOME: home }),
      120_000,
    );
    const lines = doctor.stdout.split('\n');
    const at = lines.findIndex((line) => line.includes('mcp server intmp:'));
    expect(lines[at]).toMatch(/is under \/tmp, which the sandbox replaces/);
    const said = lines.slice(at + 1).filter((line) => line.startsWith('         | '));
    expect(said[0]).toMatch(/stderr \(first \d+ lines\):/);
    expect(said.join('\n')).toContain(`Error: Cannot find module '${entry}'`);
    expect(said.length - 1).toBeLessThanOrEqual(DOCTOR_STDERR_LINES);
  }, 180_000);

  it('npx without the network: says it needs the network or a preinstalled server, well before the start timeout', async () => {
    const server: ConfiguredServer = {
      name: 'fetched',
      config: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything@2026.8.31', 'stdio'] },
      source: 'config',
    };
    const started = Date.now();
    const error = await hub.connect(server, run(tempDir('mcp-errors-npx'))).then(
      () => null,
      (err: Error) => err,
    );
    const took = Date.now() - started;
    expect(error?.message).toMatch(
      /npx needs the network or a preinstalled server, and this goal's sandbox has no network/,
    );
    expect(took).toBeLessThan(MCP_CONNECT_TIMEOUT_MS);
  }, 120_000);
});
