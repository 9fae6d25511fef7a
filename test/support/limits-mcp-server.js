// A tiny MCP stdio server for the resource-limit tests: `limits` answers with its own rlimits and
// cgroups as the kernel shows them (/proc/self/limits, /proc/self/cgroup), and `hog` allocates
// memory until something stops it.
const fs = require('node:fs');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');

const server = new McpServer({ name: 'limits', version: '1.0.0' });
server.registerTool('limits', { inputSchema: {} }, async () => ({
  content: [
    { type: 'text', text: fs.readFileSync('/proc/self/limits', 'utf8') },
    { type: 'text', text: fs.readFileSync('/proc/self/cgroup', 'utf8') },
  ],
}));
const held = [];
server.registerTool('hog', { inputSchema: {} }, async () => {
  for (;;) {
    const block = Buffer.alloc(16 * 1024 * 1024, 1);
    held.push(block);
  }
});
server.connect(new StdioServerTransport());
