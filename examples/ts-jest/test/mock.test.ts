// jest.mock: the whole records-client module is replaced by an automock,
// and the test gives saveRecord a mockTool callable as its implementation.
import { afterEach, expect, test } from "@jest/globals";
import { runDrills } from "dryfire";
import { mockTool } from "dryfire/testing";
import { saveRecord } from "../src/records-client";
import { RecordsError } from "../src/records-errors";
import { runAgent } from "../src/agent";

jest.mock("../src/records-client");
afterEach(() => {
  jest.resetAllMocks();
});

const save = { packageId: "record-store", operationId: "records.save" };

test("the agent saves the intended record", async () => {
  const result = await runDrills({
    drill: "save-record",
    agent: async ({ task, binding }) => {
      jest.mocked(saveRecord).mockImplementation(mockTool(binding, {
        mode: "async",
        operation: save,
        input: (id: string, text: string) => ({ id, text }),
        idempotencyKey: (id: string) => `save-${id}`,
      }));
      return runAgent(task.instruction);
    },
  });
  expect(result.verdict).toBe("passed");
  expect(result.output).toBe("Saved record-1 (version 1).");
});

test("failing variant: a save the store refuses as too long fails the drill", async () => {
  const result = await runDrills({
    drill: "save-record",
    setup: {
      scenario: {
        toolOverrides: [{ id: "too-long", operation: save, outcome: { kind: "error", code: "TOO_LONG", message: "at most 3 characters" } }],
      },
    },
    agent: async ({ task, binding }) => {
      jest.mocked(saveRecord).mockImplementation(mockTool(binding, {
        mode: "async",
        operation: save,
        input: (id: string, text: string) => ({ id, text }),
        error: (e) => new RecordsError(e.code, e.retryable, e.message),
      }));
      return runAgent(task.instruction);
    },
  });
  expect(result.verdict).toBe("failed");
  expect(result.failures).toEqual([
    "the agent failed: at most 3 characters",
    "expected record-store.records.record-1.text to exist; it is absent (record-store.records exists; it holds record-0)",
    "expected record.saved with {\"id\":\"record-1\"} to be emitted 1 time; it was emitted 0 times (no event was emitted at all)",
    "expected output to contain \"Saved record-1\"; output was \"\"",
  ]);
  expect(jest.mocked(saveRecord)).toHaveBeenCalledTimes(1);
});
