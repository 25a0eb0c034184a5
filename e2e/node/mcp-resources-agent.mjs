// An agent that uses an MCP server's resources and prompts, on the
// official MCP TypeScript SDK client over streamable HTTP (DRYFIRE_MCP_URL):
// it lists the resources and templates, reads the refund policy and the
// order of its input, gets the refund prompt with the order filled in,
// completes the order id, and prints what it read, one line each. Run by
// internal/runner's TestMCPResourcesNode.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const client = new Client({ name: "resources-agent", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.DRYFIRE_MCP_URL)));
const order = process.env.DRYFIRE_INPUT;
const { resources } = await client.listResources();
const { resourceTemplates } = await client.listResourceTemplates();
const lines = [
  "resources: " + resources.map((r) => r.uri).join(" "),
  "templates: " + resourceTemplates.map((t) => t.uriTemplate).join(" "),
];
const policy = await client.readResource({ uri: "docs://refund-policy" });
lines.push("policy: " + policy.contents[0].text);
const o = await client.readResource({ uri: `orders://${order}` });
lines.push(`order: ${o.contents[0].mimeType} ${o.contents[0].text}`);
const p = await client.getPrompt({ name: "refund_request", arguments: { order_id: order, reason: "late" } });
lines.push("prompt: " + p.messages.map((m) => `${m.role}: ${m.content.text}`).join(" | "));
const c = await client.complete({ ref: { type: "ref/prompt", name: "refund_request" }, argument: { name: "order_id", value: order.slice(0, 2) } });
lines.push("complete: " + c.completion.values.join(" "));
await client.close();
console.log(lines.join("\n"));
