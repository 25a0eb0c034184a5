// Reproduction: a stored runDrills report re-run with the same agent gives
// identical evidence; with a changed agent it says where they differ.
// Per-test rules come back from the report's build, not from the test.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { runDrills, type AgentContext, type Report } from "dryfire";
import { mockTool } from "dryfire/testing";
import { busyOnce, cwd, SAVE } from "./helpers.js";

function agent(text: string) {
  return async ({ binding }: AgentContext) => {
    const save = mockTool(binding, {
      mode: "async",
      operation: SAVE,
      input: (id: string, t: string) => ({ id, text: t }),
      idempotencyKey: (id: string) => `save-${id}`,
    });
    for (let attempt = 0; ; attempt++) {
      try {
        await save("record-1", text);
        return `saved after ${attempt} retries`;
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
  };
}

test("reproducing a stored report with the same agent gives identical evidence", async () => {
  const first = await runDrills({ drill: "save-hello", cwd, seed: 9, setup: { scenario: { toolOverrides: [busyOnce] } }, agent: agent("hello") });
  expect(first.verdict).toBe("passed");
  expect(first.evidence.map((e) => e.outcome)).toEqual(["error", "behavior"]);
  const file = join(mkdtempSync(join(tmpdir(), "dryfire-report-")), "report.json");
  writeFileSync(file, JSON.stringify(first.report));
  const stored = JSON.parse(readFileSync(file, "utf8")) as Report;

  const again = await runDrills({ reproduce: stored, agent: agent("hello") });
  expect(again.reproduction).toEqual({ identical: true, differences: [] });
  expect(again.evidence).toEqual(first.evidence);
  expect(again.seed).toBe(9);
  expect(again.buildHash).toBe(first.buildHash);
  expect(again.verdict).toBe("passed");
});

test("reproducing after a change to the agent says where it differs", async () => {
  const first = await runDrills({ drill: "save-hello", cwd, setup: { scenario: { toolOverrides: [busyOnce] } }, agent: agent("hello") });
  const changed = await runDrills({ reproduce: first, agent: agent("goodbye") });
  expect(changed.reproduction?.identical).toBe(false);
  expect(changed.reproduction?.differences).toEqual([
    'evidence[0].arguments.text: stored "hello", re-run "goodbye"',
    'evidence[1].arguments.text: stored "hello", re-run "goodbye"',
    "verdict: stored passed, re-run failed (1 of 2 checks failed)",
  ]);
  expect(changed.verdict).toBe("failed");
});
