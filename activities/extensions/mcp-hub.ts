/**
 * The MCP servers a tool host runs, per goal: started when the goal's tools are listed or on its
 * first call, kept while the goal uses them, restarted (with a notice) when one died, and stopped
 * when the goal's jobs are killed (the goal ended), after MCP_IDLE_MS without a call, or when the
 * worker stops. One per process: calls of a goal reach the same server whichever activity runs them.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ConfiguredServer } from './extension-config';
import { McpConnection, type McpRunContext } from './mcp-connection';

/** A server no call has used for this long is stopped (the next call starts it again). */
export const MCP_IDLE_MS = 15 * 60_000;
/** How often idle servers are looked for. */
const IDLE_SWEEP_MS = 60_000;

interface Entry {
  connection?: McpConnection;
  /** A start in progress, so two calls at once start one server. */
  starting?: Promise<McpConnection>;
  lastUsed: number;
}

/** What getting a server's connection took. */
export interface Connected {
  connection: McpConnection;
  /** Set when the server had died and was started again: a notice for the result. */
  restarted?: string;
}

/** The running MCP servers of this process, by session and server name. */
export class McpHub {
  private readonly sessions = new Map<string, Map<string, Entry>>();
  private sweeper: NodeJS.Timeout | undefined;

  /** The server's connection: the running one, or a new one when it is not running (restarted if it died). */
  async connect(server: ConfiguredServer, context: McpRunContext): Promise<Connected> {
    const servers = this.sessionServers(context.sessionId);
    let entry = servers.get(server.name);
    if (!entry) {
      entry = { lastUsed: Date.now() };
      servers.set(server.name, entry);
    }
    entry.lastUsed = Date.now();
    if (entry.connection?.alive) return { connection: entry.connection };
    let restarted: string | undefined;
    if (entry.connection) {
      restarted = `[goalrun: MCP server "${server.name}" had stopped (${entry.connection.describeExit()}); it was started again for this call]`;
      await entry.connection.close();
      entry.connection = undefined;
    }
    const current = entry;
    current.starting ??= McpConnection.open(server, context).finally(() => {
      current.starting = undefined;
    });
    const connection: McpConnection = await current.starting;
    entry.connection = connection;
    this.ensureSweeper();
    return { connection, ...(restarted ? { restarted } : {}) };
  }

  /** Lists a server's tools, starting it when needed. */
  async listTools(server: ConfiguredServer, context: McpRunContext): Promise<Tool[]> {
    const { connection } = await this.connect(server, context);
    return connection.listTools();
  }

  /** Forgets a connection that failed a call, so the next call starts the server afresh. */
  async drop(sessionId: string, serverName: string): Promise<void> {
    const entry = this.sessions.get(sessionId)?.get(serverName);
    if (!entry?.connection) return;
    const { connection } = entry;
    entry.connection = undefined;
    await connection.close();
  }

  /** Whether the session has a server here (running or starting). */
  holds(sessionId: string): boolean {
    return (this.sessions.get(sessionId)?.size ?? 0) > 0;
  }

  /** Stops every server of a session (the goal ended). Returns the names of those stopped. */
  async closeSession(sessionId: string): Promise<string[]> {
    const servers = this.sessions.get(sessionId);
    if (!servers) return [];
    this.sessions.delete(sessionId);
    const names: string[] = [];
    for (const [name, entry] of servers) {
      const connection = entry.connection ?? (await entry.starting?.catch(() => undefined));
      if (connection) {
        names.push(name);
        await connection.close();
      }
    }
    return names;
  }

  /** Stops every server (the worker stops). */
  async closeAll(): Promise<void> {
    for (const sessionId of [...this.sessions.keys()]) await this.closeSession(sessionId);
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private sessionServers(sessionId: string): Map<string, Entry> {
    let servers = this.sessions.get(sessionId);
    if (!servers) {
      servers = new Map();
      this.sessions.set(sessionId, servers);
    }
    return servers;
  }

  private ensureSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => void this.sweepIdle(), IDLE_SWEEP_MS);
    this.sweeper.unref();
  }

  private async sweepIdle(): Promise<void> {
    const now = Date.now();
    for (const [sessionId, servers] of this.sessions) {
      for (const [name, entry] of servers) {
        if (entry.connection && now - entry.lastUsed > MCP_IDLE_MS)
          await this.drop(sessionId, name).catch(() => undefined);
      }
    }
  }
}

let processHub: McpHub | undefined;

/** The MCP servers of this process. */
export function processMcpHub(): McpHub {
  processHub ??= new McpHub();
  return processHub;
}
