/**
 * MCP servers for tests: the official reference server `@modelcontextprotocol/server-everything`,
 * installed once from the npm registry into goalrun's cache (a lock keeps test files that start at
 * once from installing it twice), and a Streamable HTTP server started in the test process that
 * answers only requests carrying the right header.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** The version of the reference server the tests were written against (its tool names: echo, get-sum, get-env). */
export const SERVER_EVERYTHING_VERSION = '2026.8.31';
/** How long a test waits for another test file's install of the server. */
const INSTALL_WAIT_MS = 5 * 60_000;

/** goalrun's cache directory (as scripts/ensure-temporal.sh uses it). */
function cacheDir(): string {
  return (
    process.env.GOALRUN_CACHE_DIR ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'goalrun')
  );
}

/**
 * The directory of the installed reference server (its `dist/index.js` is the entry point) and the
 * prefix to show the sandbox (config sandbox.writable_roots: the cache lies in the hidden home).
 */
export async function ensureServerEverything(): Promise<{ entry: string; prefix: string }> {
  const prefix = path.join(cacheDir(), 'mcp-test', `server-everything@${SERVER_EVERYTHING_VERSION}`);
  const entry = path.join(
    prefix,
    'node_modules',
    '@modelcontextprotocol',
    'server-everything',
    'dist',
    'index.js',
  );
  const done = path.join(prefix, '.installed');
  if (fs.existsSync(done)) return { entry, prefix };
  fs.mkdirSync(path.dirname(prefix), { recursive: true });
  const lock = `${prefix}.lock`;
  const deadline = Date.now() + INSTALL_WAIT_MS;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      if (fs.existsSync(done)) return { entry, prefix };
      // A lock left by a killed install is older than any real one.
      const stat = fs.statSync(lock, { throwIfNoEntry: false });
      if (stat && Date.now() - stat.mtimeMs > INSTALL_WAIT_MS)
        fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline)
        throw new Error(`waited too long for another install of the MCP test server (${lock})`);
      await delay(500);
    }
  }
  try {
    if (!fs.existsSync(done)) {
      fs.mkdirSync(prefix, { recursive: true });
      execFileSync(
        'npm',
        [
          'install',
          '--prefix',
          prefix,
          '--no-audit',
          '--no-fund',
          '--no-save',
          `@modelcontextprotocol/server-everything@${SERVER_EVERYTHING_VERSION}`,
        ],
        { stdio: 'pipe', timeout: INSTALL_WAIT_MS },
      );
      if (!fs.existsSync(entry))
        throw new Error(`npm installed the MCP test server, but ${entry} is missing`);
      fs.writeFileSync(done, new Date().toISOString());
    }
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
  return { entry, prefix };
}

/** Shows the reference server's install to the sandbox: the test home's config lists `prefix` as writable. */
export function showServerToSandbox(home: string, prefix: string): void {
  fs.writeFileSync(path.join(home, 'config.json'), JSON.stringify({ sandbox: { writable_roots: [prefix] } }));
}

/** A Streamable HTTP MCP server in this process. */
export interface TestHttpMcpServer {
  url: string;
  /** Headers of every request it received (accepted or not). */
  readonly requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/**
 * Starts a stateless Streamable HTTP MCP server with one tool, `whoami`, that answers only requests
 * whose `authorization` header is `Bearer <token>` (others get 401). Its answer never repeats the token.
 */
export async function startHttpMcpServer(token: string): Promise<TestHttpMcpServer> {
  const requests: IncomingHttpHeaders[] = [];
  const server = createServer(async (req, res) => {
    requests.push(req.headers);
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const mcp = new McpServer({ name: 'goalrun-test-http', version: '1.0.0' });
    mcp.registerTool(
      'whoami',
      {
        description: 'Says who the caller is authorized as.',
        inputSchema: { greeting: z.string().optional() },
      },
      async ({ greeting }) => ({
        content: [{ type: 'text', text: `${greeting ?? 'hello'}: authorized as the goalrun test client` }],
      }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
