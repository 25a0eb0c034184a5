// A support agent on the OpenAI Agents SDK (@openai/agents): the task on standard input, the
// answer on standard output. Its model is the SDK's default, OpenAI's Responses API through the
// openai client (OPENAI_BASE_URL, OPENAI_API_KEY); its tools come from an MCP server over
// streamable HTTP (DRYFIRE_MCP_URL), of which it uses two. runAgent takes the environment to read
// them from, so that a test can run it in-process against another one.
import { Agent, MCPServerStreamableHttp, OpenAIProvider, Runner, createMCPToolStaticFilter } from "@openai/agents";

export const instructions =
  "You are the support desk's agent. Look an order up before acting. Refund only delivered orders, in full, " +
  "with a request_id; when the refund service is busy, retry with the same request_id.";

/**
 * @param {string} task
 * @param {Record<string, string | undefined>} env
 * @returns {Promise<string>}
 */
export async function runAgent(task, env = process.env) {
  const url = env.DRYFIRE_MCP_URL;
  if (!url) throw new Error("DRYFIRE_MCP_URL is not set: the MCP server of the support tools");
  const server = new MCPServerStreamableHttp({
    name: "support",
    url,
    toolFilter: createMCPToolStaticFilter({ allowed: ["lookup_order", "issue_refund"] }),
  });
  await server.connect();
  try {
    const agent = new Agent({ name: "support", instructions, model: "gpt-4.1-mini", mcpServers: [server] });
    const runner = new Runner({ modelProvider: new OpenAIProvider({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL }) });
    const result = await runner.run(agent, task, { maxTurns: 8 });
    return String(result.finalOutput ?? "");
  } finally {
    await server.close();
  }
}

async function readStdin() {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return text.trim();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await runAgent(await readStdin()));
}
