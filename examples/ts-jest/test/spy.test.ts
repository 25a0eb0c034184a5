// jest.spyOn: the module stays real, and a spy on its saveRecord export
// replaces the implementation (a spy alone would still call the real
// service). Spies are restored after each test.
import { afterEach, expect, test } from "@jest/globals";
import { runDrills } from "dryfire";
import { mockTool, ToolMockError } from "dryfire/testing";
import * as recordsClient from "../src/records-client";
import { runAgent } from "../src/agent";

afterEach(() => {
  jest.restoreAllMocks();
});

test("a spy with a mockTool implementation saves into the drill's world", async () => {
  const result = await runDrills({
    drill: "save-record",
    agent: async ({ task, binding }) => {
      jest.spyOn(recordsClient, "saveRecord").mockImplementation(mockTool(binding, {
        mode: "async",
        operation: "record-store/records.save",
        input: (id: string, text: string) => ({ id, text }),
      }));
      return runAgent(task.instruction);
    },
  });
  expect(result.verdict).toBe("passed");
  expect(result.state).toEqual({ "record-store": { records: { "record-0": { text: "hello", version: 1 }, "record-1": { text: "hello", version: 1 } } } });
});

test("failing variant: without error(envelope) the agent sees a ToolMockError, does not retry, and the drill fails", async () => {
  const result = await runDrills({
    drill: "save-record",
    setup: {
      scenario: {
        toolOverrides: [{ id: "busy-once", operation: "record-store/records.save", times: 1, outcome: { kind: "error", code: "BUSY", message: "Try again", retryable: true } }],
      },
    },
    agent: async ({ task, binding }) => {
      jest.spyOn(recordsClient, "saveRecord").mockImplementation(mockTool(binding, {
        mode: "async",
        operation: "record-store/records.save",
        input: (id: string, text: string) => ({ id, text }),
      }));
      return runAgent(task.instruction);
    },
  });
  expect(result.verdict).toBe("failed");
  expect(result.agentError).toBeInstanceOf(ToolMockError);
  expect(result.failures).toEqual([
    "the agent failed: record-store/records.save failed with BUSY (status 503): Try again",
    "expected record-store.records.record-1.text to exist; it is absent (record-store.records exists; it holds record-0)",
    "expected record.saved with {\"id\":\"record-1\"} to be emitted 1 time; it was emitted 0 times (no event was emitted at all)",
    "expected output to contain \"Saved record-1\"; output was \"\"",
  ]);
});
