/**
 * One running MCP server of one goal on the tool host: started (stdio, inside the goal's sandbox)
 * or reached (Streamable HTTP, from the tool host), with `${VAR}` references expanded from the
 * tool host's environment at that moment. Uses the official TypeScript SDK's client.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { SandboxSettings } from '../../core/sandbox-settings';
import type { SandboxHost } from '../sandbox/host';
import { prepareLaunch } from '../sandbox/launch';
import { isHttpServer } from './config-schemas';
import { expandRecord, expandVariables } from './env-expansion';
import type { ConfiguredServer } from './extension-config';
import { SandboxedStdioTransport } from './mcp-stdio-transport';

/** How long a server gets to start and answer `initialize` (an `npx` server may download first). */
export const MCP_CONNECT_TIMEOUT_MS = 60_000;
/** How long listing a server's tools may take. */
export const MCP_LIST_TIMEOUT_MS = 30_000;
/** How long one call may go without progress (a progress notification restarts the clock). */
export const MCP_CALL_IDLE_TIMEOUT_MS = 10 * 60_000;
/** Most pages of `tools/list` read from one server. */
const MAX_LIST_PAGES = 20;

/** Where and how a goal's servers run. */
export interface McpRunContext {
  workspace: string;
  sessionId: string;
  sandbox: SandboxSettings;
  host: SandboxHost;
  /** The tool host's environment, the source of `${VAR}` values. */
  env: NodeJS.ProcessEnv;
}

/** How long a server that failed to start gets to exit and say why, before it is stopped. */
const START_FAILURE_WAIT_MS = 1_000;

/** A connected server. */
export class McpConnection {
  private constructor(
    readonly server: ConfiguredServer,
    private readonly client: Client,
    private readonly transport: Transport,
    /** Expanded header values: redacted from whatever this server's calls return or say. */
    readonly secrets: readonly string[],
  ) {}

  /** Starts or reaches a server; throws with one line naming the problem (never a header or env value). */
  static async open(server: ConfiguredServer, context: McpRunContext): Promise<McpConnection> {
    const { transport, secrets } = await transportFor(server, context);
    const client = new Client({ name: 'goalrun', version: '0.1.0' }, { capabilities: {} });
    try {
      await client.connect(transport, { timeout: MCP_CONNECT_TIMEOUT_MS });
    } catch (err) {
      // A write can fail (EPIPE) before the process's exit and stderr are seen: give them a moment.
      if (transport instanceof SandboxedStdioTransport) await transport.waitForExit(START_FAILURE_WAIT_MS);
      await transport.close().catch(() => undefined);
      const exit = transport instanceof SandboxedStdioTransport ? ` (${transport.describeExit()})` : '';
      throw new Error(`could not start MCP server "${server.name}": ${(err as Error).message}${exit}`);
    }
    return new McpConnection(server, client, transport, secrets);
  }

  /** Whether the server can still take calls (an HTTP server counts as alive until a call fails). */
  get alive(): boolean {
    return this.transport instanceof SandboxedStdioTransport ? this.transport.alive : true;
  }

  /** How the server ended, for the notice when it is restarted. */
  describeExit(): string {
    return this.transport instanceof SandboxedStdioTransport
      ? this.transport.describeExit()
      : 'connection lost';
  }

  /** Every tool the server offers (all pages). */
  async listTools(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.client.listTools(cursor ? { cursor } : undefined, {
        timeout: MCP_LIST_TIMEOUT_MS,
      });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  /**
   * Calls a tool. Progress notifications reach `onProgress` (the activity's heartbeat); an abort of
   * `signal` sends MCP's `notifications/cancelled` for the request.
   */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; onProgress: (progress: { progress: number; total?: number }) => void },
  ): Promise<CallToolResult> {
    return (await this.client.callTool({ name: tool, arguments: args }, undefined, {
      signal: options.signal,
      onprogress: (progress) => options.onProgress({ progress: progress.progress, total: progress.total }),
      timeout: MCP_CALL_IDLE_TIMEOUT_MS,
      resetTimeoutOnProgress: true,
    })) as CallToolResult;
  }

  /** Stops the server (its whole process group) or closes the HTTP session. */
  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
    await this.transport.close().catch(() => undefined);
  }
}

async function transportFor(
  server: ConfiguredServer,
  context: McpRunContext,
): Promise<{ transport: Transport; secrets: string[] }> {
  const where = `mcp server "${server.name}"`;
  const { config } = server;
  if (isHttpServer(config)) {
    const url = expandVariables(config.url, context.env, `${where} url`);
    const headers = expandRecord(config.headers, context.env, `${where} headers`);
    return {
      transport: new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
      secrets: Object.values(headers),
    };
  }
  const command = expandVariables(config.command, context.env, `${where} command`);
  const args = (config.args ?? []).map((arg, index) =>
    expandVariables(arg, context.env, `${where} args[${index}]`),
  );
  const env = expandRecord(config.env, context.env, `${where} env`);
  // The sandbox starts in the workspace; a configured cwd is entered inside it.
  const argv = config.cwd
    ? [
        'bash',
        '-c',
        'cd -- "$1" && shift && exec "$@"',
        'bash',
        path.resolve(context.workspace, config.cwd),
        command,
        ...args,
      ]
    : [command, ...args];
  const launch = await prepareLaunch({
    command: '',
    argv,
    workspace: context.workspace,
    sessionId: context.sessionId,
    settings: context.sandbox,
    escalated: false,
    host: context.host,
    extraEnv: env,
    infoFd: false,
  });
  if (!launch.ok) throw new Error(`could not start MCP server "${server.name}": ${launch.error}`);
  return { transport: new SandboxedStdioTransport(launch.spec), secrets: [] };
}
