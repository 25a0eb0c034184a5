// Function mocks and protocol clients share state and evidence: the agent
// saves through mockTool and reads through a real MCP client
// (@modelcontextprotocol/sdk) on the drill's binding.
import { expect, test } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runDrills } from "dryfire";
import { mockTool } from "dryfire/testing";
import { cwd, SAVE } from "./helpers.js";

test("mockTool and an MCP client in one drill share state and evidence", async () => {
  const r = await runDrills({
    drill: "mail-and-save",
    cwd,
    agent: async ({ binding }) => {
      expect(binding.env.DRYFIRE_MCP_URL).toBe(binding.mcpUrl);
      const client = new Client({ name: "sdk-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(binding.mcpUrl)));
      try {
        const tools = await client.listTools();
        expect(tools.tools.map((t) => t.name).sort()).toEqual(["get_record", "save_record", "send_mail"]);
        const save = mockTool(binding, { mode: "async", operation: SAVE, input: (id: string, text: string) => ({ id, text }) });
        await save("record-7", "from a function mock");
        const read = await client.callTool({ name: "get_record", arguments: { id: "record-7" } });
        expect(read.isError).toBeFalsy();
        expect(read.structuredContent).toEqual({ text: "from a function mock", version: 1 });
        const sent = await client.callTool({ name: "send_mail", arguments: { to: "ada" } });
        expect(sent.isError).toBeFalsy();
      } finally {
        await client.close();
      }
      return "saved and mailed";
    },
  });
  expect(r.failures).toEqual([]);
  expect(r.verdict).toBe("passed");
  expect(r.evidence.map((e) => e.operation)).toEqual(["record-store/records.save", "record-store/records.get", "mail/mail.send"]);
  expect(r.state).toMatchObject({ mail: { outbox: [{ to: "ada" }] }, "record-store": { records: { "record-7": { version: 1 } } } });
});
