// A coding agent on the Codex SDK: the task on standard input, the answer on standard output. The
// SDK runs Codex CLI with OpenAI's own provider, its base URL OPENAI_BASE_URL (dryfire's endpoint
// under agent.command), which Codex reaches over the Responses API's WebSocket; its tools are
// Codex's own (exec_command) and those of the MCP server at DRYFIRE_MCP_URL.
import { Codex } from "@openai/codex-sdk";

/**
 * @param {string} task
 * @param {{cwd?: string, env?: Record<string, string | undefined>}} [at]
 * @returns {Promise<string>}
 */
export async function runAgent(task, { cwd = process.cwd(), env = process.env } = {}) {
  const codex = new Codex({
    baseUrl: env.OPENAI_BASE_URL,
    apiKey: env.OPENAI_API_KEY,
    env: /** @type {Record<string, string>} */ ({ ...env }),
    config: {
      // Its classic tools (a model outside Codex's catalog), no call home.
      check_for_update_on_startup: false,
      analytics: { enabled: false },
      feedback: { enabled: false },
      features: { plugins: false, remote_plugin: false, plugin_discovery_prefetch: false, recommended_plugins: false },
      ...(env.DRYFIRE_MCP_URL ? { mcp_servers: { dryfire: { url: env.DRYFIRE_MCP_URL } } } : {}),
    },
  });
  const thread = codex.startThread({
    model: "dryfire-script",
    workingDirectory: cwd,
    skipGitRepoCheck: true,
    sandboxMode: "danger-full-access", // dryfire's sandbox confines it
    approvalPolicy: "never",
  });
  const turn = await thread.run(task);
  return turn.finalResponse;
}

async function readStdin() {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return text.trim();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await runAgent(await readStdin()));
}
