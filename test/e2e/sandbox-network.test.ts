/**
 * Issue 8, acceptance 3: the sandbox's network. With the network off (the default), `bash` cannot
 * reach a TCP server the test runs on 127.0.0.1 outside the sandbox (the sandbox has a loopback of
 * its own); with `--network`, or config `sandbox.network: true`, it can, and says so both ways: the
 * server saw what the command sent, and the tool result holds the server's answer.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionStore } from '../../store/types';
import { runCli, scriptedModel } from '../support/cli';
import { type GoalTestEnv, goalTestEnv, testStore } from '../support/goal-env';
import { toolResultsOf } from '../support/tool-results';

/** A TCP server that records every line it receives and answers with a greeting. */
interface RecordingServer {
  port: number;
  received: string[];
  connections: number;
  close(): Promise<void>;
}

async function startRecordingServer(): Promise<RecordingServer> {
  const received: string[] = [];
  const state = { connections: 0 };
  const server = net.createServer((socket) => {
    state.connections++;
    socket.setEncoding('utf8');
    let buffered = '';
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        received.push(line);
        socket.end(`hello ${line} from the host\n`);
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    received,
    get connections() {
      return state.connections;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A bash command that sends `tag` to the server and prints its answer. */
function connectCommand(port: number, tag: string): string {
  return `exec 3<>/dev/tcp/127.0.0.1/${port} && echo ${tag} >&3 && cat <&3`;
}

/** Runs one goal whose only tool call is `command`, and returns its bash result. */
async function runBashGoal(t: GoalTestEnv, command: string, flags: string[]) {
  const model = scriptedModel(t.home, [
    { toolCalls: [{ name: 'bash', args: { command } }] },
    { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'tried the network' } }] },
  ]);
  const result = await runCli(
    ['run', 'reach the host server', '--workspace', t.workspace, '--model', model, '--json', ...flags],
    t.env,
  );
  expect(result.code, result.stderr).toBe(0);
  const { sessionId } = JSON.parse(result.stdout);
  const results = await toolResultsOf(store, sessionId);
  const bash = results.filter((r) => r.toolName === 'bash');
  expect(bash).toHaveLength(1);
  return bash[0];
}

let store: SessionStore;
let server: RecordingServer;

describe('the sandbox network', () => {
  const t = goalTestEnv('network');

  beforeAll(async () => {
    server = await startRecordingServer();
    store = await testStore(t.databaseUrl);
  });

  afterAll(async () => {
    await store?.close();
    await server?.close();
  });

  it('is off by default: the host server is unreachable and sees nothing', async () => {
    const before = server.connections;
    const bash = await runBashGoal(t, connectCommand(server.port, 'sandboxed'), []);
    expect(bash.ok).toBe(false);
    // The sandbox's own loopback has nothing listening on that port.
    expect(bash.text).toContain('Connection refused');
    expect(bash.text).not.toContain('from the host');
    expect(server.connections).toBe(before);
    expect(server.received).not.toContain('sandboxed');
  });

  it('is on with --network: the command talks to the host server', async () => {
    const bash = await runBashGoal(t, connectCommand(server.port, 'flagged'), ['--network']);
    expect(bash.text).toContain('hello flagged from the host');
    expect(bash.ok).toBe(true);
    expect(server.received).toContain('flagged');
  });

  it('is on with config sandbox.network: true, and a config without it stays off', async () => {
    const configPath = path.join(t.home, 'config.json');
    fs.writeFileSync(configPath, `${JSON.stringify({ sandbox: { network: true } })}\n`);
    try {
      const bash = await runBashGoal(t, connectCommand(server.port, 'configured'), []);
      expect(bash.text).toContain('hello configured from the host');
      expect(server.received).toContain('configured');

      fs.writeFileSync(configPath, `${JSON.stringify({ sandbox: { network: false } })}\n`);
      const off = await runBashGoal(t, connectCommand(server.port, 'configured-off'), []);
      expect(off.text).toContain('Connection refused');
      expect(server.received).not.toContain('configured-off');
    } finally {
      fs.rmSync(configPath, { force: true });
    }
  });
});
