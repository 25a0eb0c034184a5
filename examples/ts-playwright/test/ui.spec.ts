// Playwright drives the agent's web UI (src/server.mjs) inside a drill:
// runDrills's agent function starts the server with the drill's binding
// env, so the agent's model is the suite's script and its record store is
// the world's HTTP routes (the target declares bindings: [http]). What the
// page shows is the drill's output; the drill's verdict is the assertion.
import { expect, test, type Page } from "@playwright/test";
import { runDrills, type Binding } from "dryfire";
import { startServer } from "../src/server.mjs";

const suite = "records.dryfire.yaml";

// The agent function of a drill: the web UI served on the drill's binding,
// a user asking through the page, and the page's answer as the output.
const throughThePage = (page: Page) => async ({ task, binding }: { task: { instruction: string }; binding: Binding }) => {
  expect(binding.bindings).toEqual(["http"]); // the suite's target: only the HTTP routes answer
  const server = await startServer(binding.env);
  try {
    await page.goto(server.url);
    await page.getByLabel("Ask the agent").fill(task.instruction);
    await page.getByRole("button", { name: "Ask" }).click();
    return await page.locator("#result").innerText();
  } finally {
    await server.close();
  }
};

test("the page saves the record and shows it: the drill passes", async ({ page }) => {
  const result = await runDrills({ drill: "save-record", suite, agent: throughThePage(page) });
  expect(result.failures).toEqual([]);
  expect(result.verdict).toBe("passed");
  await expect(page.locator("#answer")).toHaveText("Saved record-1.");
  await expect(page.locator("#records li")).toHaveText(["record-1: hello (version 1)"]);
  expect(result.evidence.map((e) => [e.operation, e.outcome])).toEqual([
    ["record-store/records.save", "behavior"],
    ["record-store/records.get", "behavior"],
  ]);
});

test("failing variant: the world fails the save, the page shows the error, the drill fails", async ({ page }) => {
  const result = await runDrills({
    drill: "save-record",
    suite,
    setup: {
      scenario: {
        toolOverrides: [{
          id: "store-busy",
          operation: { packageId: "record-store", operationId: "records.save" },
          outcome: { kind: "error", code: "BUSY", message: "the store is busy", retryable: true },
        }],
      },
    },
    agent: throughThePage(page),
  });
  await expect(page.getByRole("alert")).toHaveText("the record store answered 503 BUSY: the store is busy");
  await expect(page.locator("#records")).toHaveCount(0);
  expect(result.verdict).toBe("failed");
  expect(result.failures).toEqual([
    "expected record-store.records.record-1.text to exist; it is absent (record-store.records exists; it holds record-0)",
    "expected record.saved with {\"id\":\"record-1\"} to be emitted 1 time; it was emitted 0 times (no event was emitted at all)",
    "expected output to contain \"record-1: hello (version 1)\"; output was \"the record store answered 503 BUSY: the store is busy\"",
  ]);
  expect(result.evidence.map((e) => [e.operation, e.outcome, (e.override as { id: string } | null)?.id])).toEqual([
    ["record-store/records.save", "error", "store-busy"],
  ]);
});
