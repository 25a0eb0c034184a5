// An agent whose tools come from an MCP server it starts itself (stdio),
// on the official MCP TypeScript SDK client: the server is the command
// dryfire binds to the case, DRYFIRE_MCP_ARGV (the same as
// DRYFIRE_MCP_COMMAND, as a JSON array). It calls next_ticket three times
// and prints the texts, joined by commas. Run by internal/runner's
// TestMCPBridgeNode, eight cases at once.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = JSON.parse(process.env.DRYFIRE_MCP_ARGV);
// The SDK gives the server only a few variables of its own (PATH, HOME, ...):
// the command holds the case's URL, so it needs none of dryfire's.
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "stdio-agent", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
if (!tools.some((t) => t.name === "next_ticket")) throw new Error(`no next_ticket among ${tools.map((t) => t.name)}`);
const got = [];
for (let i = 0; i < 3; i++) {
  const r = await client.callTool({ name: "next_ticket", arguments: { queue: process.env.DRYFIRE_CASE } });
  got.push(r.content.map((c) => c.text).join(""));
}
await client.close();
console.log(got.join(","));
