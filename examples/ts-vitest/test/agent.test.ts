// The product note's example, and two more drills of the same agent: a
// busy store it retries through, and a store that stays busy (the failing
// variant: its verdict and failure text are asserted).
import { afterEach, expect, test, vi } from "vitest";
import { runDrills } from "dryfire";
import { mockTool } from "dryfire/testing";
import { saveRecord } from "../src/records-client.js";
import { RecordsError } from "../src/records-errors.js";
import { runAgent } from "../src/agent.js";

vi.mock("../src/records-client.js", () => ({ saveRecord: vi.fn() }));
afterEach(() => vi.resetAllMocks());

test("the agent saves the intended record", async () => {
  const result = await runDrills({
    drill: "save-record",
    agent: async ({ task, binding }) => {
      vi.mocked(saveRecord).mockImplementation(mockTool(binding, {
        mode: "async",
        operation: { packageId: "record-store", operationId: "records.save" },
        input: (id: string, text: string) => ({ id, text }),
        idempotencyKey: (id: string) => `save-${id}`,
      }));
      return runAgent(task.instruction);
    },
  });
  expect(result.verdict).toBe("passed");
});

const busy = (times?: number) => ({
  id: "busy",
  operation: { packageId: "record-store", operationId: "records.save" },
  when: { arguments: { id: "record-1" } },
  times,
  outcome: { kind: "error" as const, code: "BUSY", message: "Try again", retryable: true },
});

// The dependency's own error class, so that the agent's retry logic sees
// what the real client would throw.
function installSave(binding: Parameters<typeof mockTool>[0]) {
  vi.mocked(saveRecord).mockImplementation(mockTool(binding, {
    mode: "async",
    operation: { packageId: "record-store", operationId: "records.save" },
    input: (id: string, text: string) => ({ id, text }),
    idempotencyKey: (id: string) => `save-${id}`,
    error: (e) => new RecordsError(e.code, e.retryable, e.message),
  }));
}

test("the agent retries a busy save with the same idempotency key", async () => {
  const result = await runDrills({
    drill: "save-record",
    setup: { scenario: { toolOverrides: [busy(1)] } },
    agent: async ({ task, binding }) => {
      installSave(binding);
      return runAgent(task.instruction);
    },
  });
  expect(result.verdict).toBe("passed");
  expect(result.evidence.map((e) => [e.outcome, e.idempotency_key])).toEqual([
    ["error", "save-record-1"],
    ["behavior", "save-record-1"],
  ]);
  expect(vi.mocked(saveRecord)).toHaveBeenCalledTimes(2);
});

test("failing variant: a store that stays busy fails the drill", async () => {
  const result = await runDrills({
    drill: "save-record",
    setup: { scenario: { toolOverrides: [busy()] } },
    agent: async ({ task, binding }) => {
      installSave(binding);
      return runAgent(task.instruction);
    },
  });
  expect(result.verdict).toBe("failed");
  expect(result.failures).toEqual([
    "the agent failed: Try again",
    "expected record-store.records.record-1.text to exist; it is absent (record-store.records exists; it holds record-0)",
    "expected record.saved with {\"id\":\"record-1\"} to be emitted 1 time; it was emitted 0 times (no event was emitted at all)",
    "expected output to contain \"Saved record-1\"; output was \"\"",
  ]);
  expect(result.agentError).toBeInstanceOf(RecordsError);
  expect(result.evidence).toHaveLength(3);
});
