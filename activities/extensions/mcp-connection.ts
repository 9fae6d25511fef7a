/**
 * One running MCP server of one goal on the tool host: started (stdio, inside the goal's sandbox)
 * or reached (Streamable HTTP, from the tool host), with `${VAR}` references expanded from the
 * tool host's environment at that moment. Uses the official TypeScript SDK's client.
 */
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_RESOURCE_LIMITS, type SandboxSettings } from '../../core/sandbox-settings';
import type { SandboxHost } from '../sandbox/host';
import { prepareLaunch } from '../sandbox/launch';
import { firstUnseenPath } from '../sandbox/path-visibility';
import { isHttpServer } from './config-schemas';
import { expandRecord, expandVariables } from './env-expansion';
import type { ConfiguredServer } from './extension-config';
import { SandboxedStdioTransport } from './mcp-stdio-transport';

/** How long a server gets to start and answer `initialize` (an `npx` server may download first). */
export const MCP_CONNECT_TIMEOUT_MS = 60_000;
/**
 * How long a package runner (`npx`, `uvx`) gets to answer without the network: one that has to
 * download the server cannot, and would otherwise be seen only after MCP_CONNECT_TIMEOUT_MS.
 */
export const MCP_OFFLINE_RUNNER_TIMEOUT_MS = 5_000;
/** Commands that fetch the server they run: they need the network unless it is installed already. */
const PACKAGE_RUNNERS: ReadonlySet<string> = new Set(['npx', 'uvx', 'bunx', 'pnpx']);
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

/** A server that could not start: the one-line reason, and what it said on stderr (for `doctor`). */
export class McpStartError extends Error {
  readonly type = 'McpStartError';
  constructor(
    message: string,
    /** Up to DOCTOR_STDERR_LINES lines of the server's stderr. */
    readonly stderr: readonly string[] = [],
  ) {
    super(message);
    this.name = 'McpStartError';
  }
}

/** The package runner a stdio server is started with (`npx -y pkg`), or null. */
export function packageRunnerOf(server: ConfiguredServer): string | null {
  if (isHttpServer(server.config)) return null;
  const name = path.basename(server.config.command);
  return PACKAGE_RUNNERS.has(name) ? name : null;
}

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
    // Loaded with the first server, not at every worker's start (the MCP SDK, with the ajv and zod
    // schemas it validates with, costs about 0.17 s of CPU to load, and most workers run no server).
    const { Client } =
      require('@modelcontextprotocol/sdk/client/index.js') as typeof import('@modelcontextprotocol/sdk/client/index.js');
    const client = new Client({ name: 'goalrun', version: '0.1.0' }, { capabilities: {} });
    // A runner that must fetch the server cannot do it offline: said within seconds, not after a minute.
    const runner = context.sandbox.network ? null : packageRunnerOf(server);
    try {
      await client.connect(transport, {
        timeout: runner ? MCP_OFFLINE_RUNNER_TIMEOUT_MS : MCP_CONNECT_TIMEOUT_MS,
      });
    } catch (err) {
      // A write can fail (EPIPE) before the process's exit and stderr are seen: give them a moment.
      if (transport instanceof SandboxedStdioTransport) await transport.waitForExit(START_FAILURE_WAIT_MS);
      await transport.close().catch(() => undefined);
      const stdio = transport instanceof SandboxedStdioTransport ? transport : null;
      const exit = stdio ? ` (${stdio.describeExit()})` : '';
      const why = [
        ...(runner
          ? [
              `${runner} needs the network or a preinstalled server, and this goal's sandbox has no network: install the server and name its command (in the workspace or a sandbox.writable_roots directory), or allow --network`,
            ]
          : []),
        ...(isHttpServer(server.config)
          ? []
          : [unseenPathOf(server, context)].filter((text) => text !== null)),
      ];
      throw new McpStartError(
        `could not start MCP server "${server.name}": ${why.length > 0 ? `${why.join('; ')}; ` : ''}${(err as Error).message}${exit}`,
        stdio?.stderr.excerpt() ?? [],
      );
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
  // A workspace file's server never takes a value from the tool host's environment.
  const env = server.fromWorkspace ? {} : context.env;
  if (isHttpServer(config)) {
    const url = expandVariables(config.url, env, `${where} url`);
    const headers = expandRecord(config.headers, env, `${where} headers`);
    const { StreamableHTTPClientTransport } =
      require('@modelcontextprotocol/sdk/client/streamableHttp.js') as typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    return {
      transport: new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
      secrets: Object.values(headers),
    };
  }
  const command = expandVariables(config.command, env, `${where} command`);
  const args = (config.args ?? []).map((arg, index) => expandVariables(arg, env, `${where} args[${index}]`));
  const serverEnv = expandRecord(config.env, env, `${where} env`);
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
    extraEnv: serverEnv,
    infoFd: false,
    // A server runs under the same memory, process and CPU limits as a tool call (issue 24 §7).
    limited: true,
  });
  if (!launch.ok) throw new McpStartError(`could not start MCP server "${server.name}": ${launch.error}`);
  const limits = context.sandbox.limits ?? DEFAULT_RESOURCE_LIMITS;
  return { transport: new SandboxedStdioTransport(launch.spec, limits), secrets: [] };
}

/** Why the sandbox cannot see the server's program or a path among its arguments, or null. */
function unseenPathOf(server: ConfiguredServer, context: McpRunContext): string | null {
  if (isHttpServer(server.config)) return null;
  const { command, args = [], cwd } = server.config;
  return firstUnseenPath([command, ...args, ...(cwd ? [path.resolve(context.workspace, cwd)] : [])], {
    workspace: context.workspace,
    sandbox: context.sandbox,
    host: context.host,
  });
}
