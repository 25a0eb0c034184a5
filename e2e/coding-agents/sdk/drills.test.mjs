// Drills with a world under node:test (runDrills) for the coding agents on the Claude Agent SDK
// for TypeScript (claude_agent.mjs) and on the Codex SDK (codex_agent.mjs): the agent in this
// process, the CLI under it reaching the drill's model endpoint (Codex over the Responses
// WebSocket) and the world's tools over MCP, the script answering, the world judging. The same
// drill as test_drills.py's (sdk-drills.dryfire.yaml); scripts/ci.d/65-coding-agents.sh builds
// the TypeScript SDK of this checkout into node_modules/dryfire and runs this file.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { runDrills } from "dryfire";
import { runAgent as claudeAgent } from "./claude_agent.mjs";
import { runAgent as codexAgent } from "./codex_agent.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", ".."); // the repository: the world is examples/world's
const suite = join(here, "..", "sdk-drills.dryfire.yaml");
const drill = "a coding agent refunds through a busy refund service";

// The calls home off, as agent.cli sets them for each CLI.
const offline = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
  DISABLE_AUTOUPDATER: "1",
  ENABLE_TOOL_SEARCH: "false",
};

for (const [sdk, runAgent] of [["the Claude Agent SDK", claudeAgent], ["the Codex SDK", codexAgent]]) {
  test(`${sdk} refunds through a busy service`, async () => {
    const home = mkdtempSync(join(tmpdir(), "dryfire-drill-home-"));
    try {
      const result = await runDrills({
        drill,
        suite,
        cwd: root,
        agent: ({ task, binding }) => {
          const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(ANTHROPIC|OPENAI)_/.test(k)));
          // A home of its own; the drill's model endpoint and MCP server.
          return runAgent(task.instruction, { cwd: home, env: { ...env, ...offline, ...binding.env, HOME: home } });
        },
      });
      assert.deepEqual(result.failures, []);
      assert.equal(result.verdict, "passed");
      assert.deepEqual(
        result.evidence.map((e) => [e.operation, e.is_error]),
        [["orders/orders.get", false], ["refunds/refunds.create", true], ["refunds/refunds.create", false]],
      );
      assert.equal(result.output, "Order A-991 is refunded in full (refund R-1).");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
}
