import { afterEach, expect, test, vi } from "vitest";
import { runDrills } from "@firedrill/sdk";
import { mockTool } from "@firedrill/sdk/testing";
import { saveRecord } from "../src/records-client.js";
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

