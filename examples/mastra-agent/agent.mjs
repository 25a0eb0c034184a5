// A support agent on Mastra: its tools from an MCP server through @mastra/mcp's MCPClient, which
// shows them to the model under the server's name (dryfire_lookup_order), its model on the OpenAI
// API (@ai-sdk/openai, OPENAI_BASE_URL). It reads the task on stdin and prints its answer.
import { createOpenAI } from "@ai-sdk/openai";
import { Agent } from "@mastra/core/agent";
import { MCPClient } from "@mastra/mcp";

let task = "";
for await (const chunk of process.stdin) task += chunk;
const mcp = new MCPClient({ id: "support", servers: { dryfire: { url: new URL(process.env.DRYFIRE_MCP_URL) } } });
try {
  const agent = new Agent({
    id: "support",
    name: "support",
    instructions: "You are a support agent. Look orders up before you answer.",
    model: createOpenAI({ baseURL: process.env.OPENAI_BASE_URL })("gpt-4.1-mini"),
    tools: await mcp.listTools(),
  });
  const result = await agent.generate(task, { maxSteps: 5 });
  console.log(result.text);
} finally {
  await mcp.disconnect();
}
