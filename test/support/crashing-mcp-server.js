// A tiny MCP stdio server for tests: `echo` answers, `crash` makes the process exit at once, and
// `instance` says which process answered (a restarted server is a new one; in the sandbox's own PID
// namespace every server is pid 2, so a random id tells them apart).
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const server = new McpServer({ name: 'crashing', version: '1.0.0' });
server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: 'text', text: `echo: ${text}` }],
}));
server.registerTool('crash', { inputSchema: {} }, async () => {
  process.stderr.write('crashing on purpose\n');
  process.exit(3);
});
const instance = Math.random().toString(36).slice(2);
server.registerTool('instance', { inputSchema: {} }, async () => ({
  content: [{ type: 'text', text: `instance ${instance}` }],
}));
server.connect(new StdioServerTransport());
