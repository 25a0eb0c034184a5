// An agent on the MCP TypeScript SDK v1 client (@modelcontextprotocol/sdk)
// over streamable HTTP (DRYFIRE_MCP_URL), declaring the elicitation and
// sampling capabilities: it reads a resource, gets a prompt with its
// arguments filled, calls a tool whose rule elicits (the user accepts
// with a window seat, or declines when the case's input is "decline")
// and one whose rule samples (the "model" echoes the request), and
// prints what it got, one line each. With the argument "stdio" it starts
// its MCP server itself, as DRYFIRE_MCP_ARGV says (dryfire mcp-bridge with
// the case's URL), and speaks to it over stdio. Run by internal/runner's
// TestMCPAsksNode, as mcp-asks-agent-v2.mjs is for the v2 client.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const decline = process.env.DRYFIRE_INPUT === "decline";
const client = new Client({ name: "asks-agent-v1", version: "1.0.0" }, { capabilities: { elicitation: {}, sampling: {} } });
client.setRequestHandler(ElicitRequestSchema, async () =>
  decline ? { action: "decline" } : { action: "accept", content: { confirm: true, seat: "window" } });
client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
  role: "assistant",
  model: "ts-v1-model",
  content: { type: "text", text: "v1 says: " + req.params.messages[0].content.text },
}));
if (process.argv[2] === "stdio") {
  const [command, ...args] = JSON.parse(process.env.DRYFIRE_MCP_ARGV);
  await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
} else {
  await client.connect(new StreamableHTTPClientTransport(new URL(process.env.DRYFIRE_MCP_URL)));
}
const lines = [];
const policy = await client.readResource({ uri: "docs://refund-policy" });
lines.push("policy: " + policy.contents[0].text);
const p = await client.getPrompt({ name: "refund_request", arguments: { order_id: "A-991", reason: "late" } });
lines.push("prompt: " + p.messages.map((m) => m.content.text).join(" | "));
for (const [name, args] of [["book_flight", { to: "Paris" }], ["summarise", {}]]) {
  const r = await client.callTool({ name, arguments: args });
  lines.push(`${name}: ${r.isError ? "error: " : ""}${r.content[0].text}`);
}
await client.close();
console.log(lines.join("\n"));
