// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk) against
// `dryfire serve`, serving clients.dryfire.yaml beside this file:
//
//   node mcp-client.mjs stdio COMMAND ARGS...   (starts one server per session)
//   node mcp-client.mjs http URL                (the server's /mcp URL)
//
// It lists the tools, calls them (a result, structuredContent, an error
// result, an unmatched call, an unknown tool, image, audio and resource
// content, log and progress notifications), and checks that two sessions
// each see a sequence from its start. It prints one line per check and exits
// 1 when any failed. Run by internal/cli's TestNodeMCPClient.

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, ...rest] = process.argv.slice(2);
if ((mode !== "stdio" && mode !== "http") || rest.length === 0) {
  console.error("usage: node mcp-client.mjs stdio COMMAND ARGS... | http URL");
  process.exit(2);
}

function transport() {
  if (mode === "stdio") {
    const env = Object.fromEntries(Object.entries(process.env).filter(([, v]) => typeof v === "string"));
    return new StdioClientTransport({ command: rest[0], args: rest.slice(1), env, stderr: "ignore" });
  }
  return new StreamableHTTPClientTransport(new URL(rest[0]));
}

async function session() {
  const client = new Client({ name: "dryfire-e2e", version: "1.0.0" });
  const t = transport();
  await client.connect(t);
  return { client, t };
}

let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err && err.message ? err.message : err}`);
  }
}

const text = (res) => {
  assert.equal(res.content.length, 1, "one content block");
  assert.equal(res.content[0].type, "text");
  return res.content[0].text;
};

const a = await session();
const b = await session();

await check("negotiated protocol version", async () => {
  // The 1.x SDK speaks the legacy era; its latest is 2025-11-25.
  assert.equal(a.client.getServerVersion().name, "dryfire");
  if (mode === "http") assert.ok(a.t.sessionId, "an Mcp-Session-Id");
});

await check("tools/list in file order, with schemas", async () => {
  const { tools } = await a.client.listTools();
  assert.deepEqual(
    tools.map((t) => t.name),
    ["lookup_order", "issue_refund", "weather", "screenshot", "export"],
  );
  assert.equal(tools[0].description, "Look up an order by its id.");
  assert.deepEqual(tools[0].inputSchema, {
    type: "object",
    properties: { order_id: { type: "string" } },
    required: ["order_id"],
  });
  assert.deepEqual(tools[2].inputSchema, { type: "object" });
});

await check("a mapping result: its JSON text, no structuredContent (the tool declares no output schema)", async () => {
  const res = await a.client.callTool({ name: "lookup_order", arguments: { order_id: "A-991" } });
  assert.equal(text(res), '{"order_id":"A-991","tier":"gold"}');
  assert.equal(res.structuredContent, undefined);
  assert.ok(!res.isError);
});

await check("a string result: text only", async () => {
  const res = await a.client.callTool({ name: "weather", arguments: {} });
  assert.equal(text(res), "sunny");
  assert.equal(res.structuredContent, undefined);
});

await check("an error outcome: isError", async () => {
  const res = await a.client.callTool({ name: "lookup_order", arguments: { order_id: "E-1" } });
  assert.equal(res.isError, true);
  assert.equal(text(res), "order service unavailable");
});

await check("an unmatched call: isError with the near miss", async () => {
  const res = await a.client.callTool({ name: "lookup_order", arguments: { order_id: "Z-9" } });
  assert.equal(res.isError, true);
  assert.match(text(res), /^dryfire: no mock rule matched this call to "lookup_order"; closest rule clients\.dryfire\.yaml:\d+ differs at \$\.order_id: expected "A-991", got "Z-9"$/);
});

await check("an unknown tool: isError with a did-you-mean", async () => {
  const res = await a.client.callTool({ name: "lookup_ordr", arguments: {} });
  assert.equal(res.isError, true);
  assert.match(text(res), /no mock rules for this tool \(did you mean "lookup_order"\?\)/);
});

const redPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

await check("content blocks: text, image, audio, embedded resource", async () => {
  const res = await a.client.callTool({ name: "screenshot", arguments: {} });
  assert.ok(!res.isError);
  assert.equal(res.structuredContent, undefined);
  assert.deepEqual(res.content, [
    { type: "text", text: "Home page:" },
    { type: "image", data: redPNG, mimeType: "image/png" },
    { type: "audio", data: "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQIAAACAgA==", mimeType: "audio/wav" },
    { type: "resource", resource: { uri: "test://page.json", mimeType: "application/json", text: '{"title":"Home"}' } },
  ]);
  const png = Buffer.from(res.content[1].data, "base64");
  assert.equal(png.subarray(1, 4).toString(), "PNG");
  assert.equal(Buffer.from(res.content[2].data, "base64").subarray(0, 4).toString(), "RIFF");
});

await check("log and progress notifications before the answer", async () => {
  const logs = [];
  a.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params); });
  await a.client.setLoggingLevel("info");
  const progress = [];
  const res = await a.client.request(
    { method: "tools/call", params: { name: "export", arguments: {} } },
    CallToolResultSchema,
    { onprogress: (p) => progress.push(p) },
  );
  assert.equal(text(res), "exported");
  // Progress handlers end with the answer: these came before it.
  assert.deepEqual(progress.map((p) => [p.progress, p.total]), [[0, 100], [50, 100], [100, 100]]);
  assert.deepEqual(logs, [
    { level: "info", data: "Export started" },
    { level: "warning", logger: "exporter", data: { rows: 3 } },
  ]);
});

await check("sequence state per session", async () => {
  const seq = async (s, n) => {
    const out = [];
    for (let i = 0; i < n; i++) out.push(text(await s.client.callTool({ name: "issue_refund", arguments: { order_id: "A-991" } })));
    return out;
  };
  assert.deepEqual(await seq(a, 2), ["timeout", '{"ok":true}']);
  assert.deepEqual(await seq(b, 1), ["timeout"], "the second session starts at the first entry");
  assert.deepEqual(await seq(a, 2), ['{"ok":true}', '{"ok":true}'], "the last entry repeats");
});

await a.client.close();
await b.client.close();
console.log(failed ? `${failed} failed` : "all passed");
process.exit(failed ? 1 : 0);
