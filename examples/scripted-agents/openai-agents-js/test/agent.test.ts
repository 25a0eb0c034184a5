// The OpenAI Agents SDK agent (agent.mjs) on dryfire's script model, with no key and no cassette:
// as an agent.command case (dryfire run openai-agents.dryfire.yaml: a scripted case that passes,
// and one whose script calls a tool the agent does not offer, which fails and says so), and in
// process as an SDK drill against the support-desk world (runDrills, examples/world/scripted-agents.dryfire.yaml).
import { spawnSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { findBinary, runDrills } from "dryfire";
import { runAgent } from "../agent.mjs";

const here = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const world = resolve(here, "..", "..", "world"); // examples/world

// The environment of a machine with no key: no OPENAI_* or ANTHROPIC_* variable at all, and the
// Agents SDK's trace export off (it would post traces to OpenAI).
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(OPENAI_|ANTHROPIC_|DRYFIRE_)/.test(k) && k !== "CI") env[k] = v;
  }
  env.OPENAI_AGENTS_DISABLE_TRACING = "1";
  return env;
}

interface Case {
  name: string;
  status: string;
  reason?: string;
  output?: string;
  tool_calls?: { tool: string; is_error?: boolean }[];
  script?: { request: number; turn?: number; api: string; streamed: boolean }[];
}

test("agent.command: the scripted case passes; a script calling a tool the agent does not offer fails readably", () => {
  const r = spawnSync(findBinary().path, ["run", "openai-agents.dryfire.yaml", "--json", "-"], {
    cwd: here, env: offlineEnv(), encoding: "utf8", timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(1);
  const report = JSON.parse(r.stdout) as { cases: Case[] };
  const [ok, bad] = report.cases;
  expect(ok.status, JSON.stringify(ok, null, 1)).toBe("passed");
  expect(ok.output).toBe("Order A-991 is refunded in full (refund R-1).");
  expect(ok.tool_calls?.map((c) => [c.tool, c.is_error ?? false])).toEqual([
    ["lookup_order", false], ["issue_refund", true], ["issue_refund", false],
  ]);
  expect(ok.script?.map((s) => [s.request, s.turn, s.api, s.streamed])).toEqual([
    [1, 1, "openai-responses", false], [2, 2, "openai-responses", false],
    [3, 3, "openai-responses", false], [4, 4, "openai-responses", false],
  ]);
  expect(bad.status).not.toBe("passed");
  expect(bad.reason).toContain('script turn 2 calls tool "open_ticket", which model request 2 does not offer');
  expect(bad.tool_calls?.map((c) => c.tool)).toEqual(["lookup_order"]);
}, 120_000);

test("runDrills: the agent in process, the scripted model, the world's tools: passed", async () => {
  const saved = process.env.OPENAI_AGENTS_DISABLE_TRACING;
  process.env.OPENAI_AGENTS_DISABLE_TRACING = "1";
  try {
    const result = await runDrills({
      drill: "refund through a busy refund service",
      suite: "scripted-agents.dryfire.yaml",
      cwd: world,
      agent: ({ task, binding }) => runAgent(task.instruction, binding.env),
    });
    expect(result.failures).toEqual([]);
    expect(result.verdict).toBe("passed");
    expect(result.evidence.map((e) => [e.operation, e.is_error])).toEqual([
      ["orders/orders.get", false], ["refunds/refunds.create", true], ["refunds/refunds.create", false],
    ]);
    expect(result.output).toBe("Order A-991 is refunded in full (refund R-1).");
  } finally {
    if (saved === undefined) delete process.env.OPENAI_AGENTS_DISABLE_TRACING;
    else process.env.OPENAI_AGENTS_DISABLE_TRACING = saved;
  }
});
