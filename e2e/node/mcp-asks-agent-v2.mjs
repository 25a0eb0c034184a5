// mcp-asks-agent.mjs on the MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client): the same resource, prompt, elicitation
// and sampling, in the era its argument names: "modern" pins 2026-07-28
// (server/discover; what the server asks comes as input_required results
// the client fulfils and retries with), anything else the 2025-11-25
// handshake (the server's requests in the call's event stream). Run by
// internal/runner's TestMCPAsksNode.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const decline = process.env.DRYFIRE_INPUT === "decline";
const modern = process.argv[2] === "modern";
const client = new Client(
  { name: "asks-agent-v2", version: "1.0.0" },
  { capabilities: { elicitation: {}, sampling: {} }, versionNegotiation: { mode: modern ? { pin: "2026-07-28" } : "legacy" } },
);
client.setRequestHandler("elicitation/create", async () =>
  decline ? { action: "decline" } : { action: "accept", content: { confirm: true, seat: "window" } });
client.setRequestHandler("sampling/createMessage", async (req) => ({
  role: "assistant",
  model: "ts-v2-model",
  content: { type: "text", text: "v2 says: " + req.params.messages[0].content.text },
}));
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.DRYFIRE_MCP_URL)));
const lines = [`era: ${client.getNegotiatedProtocolVersion?.() ?? "?"}`];
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
