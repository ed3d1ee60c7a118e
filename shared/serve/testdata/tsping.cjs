// A bare stdio server on the official TypeScript SDK: a peer for
// BenchmarkStdioPing (through tsping.sh; NODE_PATH names the node_modules
// holding @modelcontextprotocol/sdk, as scripts/install puts it in
// ~/.cache/mcpfleet/ts-sdk).
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
new McpServer({ name: "tsping", version: "0" }).connect(new StdioServerTransport());
