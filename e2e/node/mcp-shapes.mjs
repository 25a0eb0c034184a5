// Every tools/call shape the MCP TypeScript SDK (1.x) client sends, over
// streamable HTTP against URL (its /mcp): a plain call, a progress token
// (onprogress), params._meta of the caller's own, both, an unknown tool, a
// sequence, with notifications between the calls (roots/list_changed) and
// a log level set. Run by internal/toolserver's TestCaptureClientShapes
// (go test -capture-clients) behind a recording handler; what it sends is
// kept in internal/toolserver/testdata/mcp-clients and replayed by
// TestWireOfficialClientShapes.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.argv[2];
if (!url) {
  console.error("usage: node mcp-shapes.mjs URL");
  process.exit(2);
}
const client = new Client({ name: "mcp-shapes", version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
client.setRequestHandler((await import("@modelcontextprotocol/sdk/types.js")).ListRootsRequestSchema, async () => ({ roots: [] }));
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
await client.listTools();
const progress = () => {};
await client.callTool({ name: "lookup_order", arguments: { order_id: "A-991" } });
await client.callTool({ name: "lookup_order", arguments: { order_id: "B-1" } }, undefined, { onprogress: progress });
await client.sendRootsListChanged();
await client.callTool({ name: "lookup_order", arguments: { order_id: "E-1" }, _meta: { "example.com/trace": "t-1" } });
await client.callTool({ name: "issue_refund", arguments: { order_id: "A-991" }, _meta: { "example.com/trace": "t-2" } }, undefined, { onprogress: progress });
await client.setLoggingLevel("info");
await client.callTool({ name: "issue_refund", arguments: {} });
await client.callTool({ name: "nope", arguments: { x: [1, 2.5, null, "é\n<&>"] } });
await client.callTool({ name: "ping" });
await transport.terminateSession();
await client.close();
