// A coding agent on the Claude Agent SDK (TypeScript): the task on standard input, the answer on
// standard output. The SDK runs Claude Code, which reads ANTHROPIC_BASE_URL (dryfire's endpoint
// under agent.command); its tools are Claude Code's own (Read, Edit, Bash) and those of the MCP
// server at DRYFIRE_MCP_URL. runAgent takes the working directory and the environment, so that a
// test can run it in process against a drill's binding (runDrills).
import { query } from "@anthropic-ai/claude-agent-sdk";

/**
 * @param {string} task
 * @param {{cwd?: string, env?: Record<string, string | undefined>}} [at]
 * @returns {Promise<string>}
 */
export async function runAgent(task, { cwd = process.cwd(), env = process.env } = {}) {
  const mcpServers = env.DRYFIRE_MCP_URL ? { dryfire: { type: "http", url: env.DRYFIRE_MCP_URL } } : {};
  let answer = "";
  for await (const message of query({
    prompt: task,
    options: {
      cwd,
      env: /** @type {Record<string, string>} */ ({ ...env }),
      mcpServers,
      allowedTools: ["Read", "Edit", "Bash", "mcp__dryfire"],
      permissionMode: "acceptEdits",
      settingSources: [],
      maxTurns: 12,
    },
  })) {
    if (message.type === "result") {
      if (message.subtype !== "success") throw new Error(`the agent ended with ${message.subtype}`);
      answer = message.result;
    }
  }
  return answer;
}

async function readStdin() {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return text.trim();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await runAgent(await readStdin()));
}
