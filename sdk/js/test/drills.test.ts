// runDrills against the real engine: finding the drill, the per-test
// setup, the verdict and its failures, the result's parts, and the world's
// own routes (state, evidence, reset) from a test.
import { describe, expect, test } from "vitest";
import { advanceClock, evidence, reset, results, runDrills, state, EngineError } from "dryfire";
import { mockTool } from "dryfire/testing";
import { busyOnce, cwd, GET, SAVE, suite } from "./helpers.js";

describe("finding the drill", () => {
  test("without suite, the drill is looked up among the world suites under cwd", async () => {
    const r = await runDrills({ drill: "save-record", cwd, agent: () => "nothing saved" });
    expect(r.suite).toBe(`${cwd}/records.dryfire.yaml`);
    expect(r.task).toEqual({ instruction: "Save record-1 with the text hello.", input: "Save record-1 with the text hello." });
  });

  test("an unknown drill is an error with a did-you-mean", async () => {
    const err = await runDrills({ drill: "save-recrod", cwd, agent: () => "" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect((err as EngineError).code).toBe("UNKNOWN_DRILL");
    expect((err as EngineError).message).toContain('has a drill "save-recrod" (did you mean "save-record"?)');
  });

  test("a drill name two suites have is an error naming both; suite chooses", async () => {
    const err = await runDrills({ drill: "shared-name", cwd, agent: () => "" }).catch((e: unknown) => e);
    expect((err as EngineError).code).toBe("AMBIGUOUS_DRILL");
    expect((err as EngineError).message).toBe(
      'drill "shared-name" is in 2 suites: other/other.dryfire.yaml, records.dryfire.yaml; pass suite to choose one',
    );
    const r = await runDrills({ drill: "shared-name", suite: "other/other.dryfire.yaml", cwd, agent: ({ task }) => task.instruction });
    expect(r.task.instruction).toBe("The other suite's drill of that name.");
  });

  test("drill is required without reproduce", async () => {
    await expect(runDrills({ agent: () => "" })).rejects.toThrow("options.drill must name a drill");
  });
});

describe("the verdict", () => {
  test("the note's example: the agent saves the intended record and the drill passes", async () => {
    const r = await runDrills({
      drill: "save-record",
      cwd,
      agent: async ({ binding }) => {
        const save = mockTool(binding, { mode: "async", operation: SAVE, input: (id: string, text: string) => ({ id, text }) });
        await save("record-1", "hello");
        return "Saved record-1.";
      },
    });
    expect(r.verdict).toBe("passed");
    expect(r.status).toBe("passed");
    expect(r.failures).toEqual([]);
    expect(r.checks.map((c) => [c.check, c.passed])).toEqual([
      ["state: {path: record-store.records.record-1.text, equals: hello}", true],
      ["called: {operation: record-store/records.save, times: 1}", true],
    ]);
    expect(r.output).toBe("Saved record-1.");
    expect(r.report.cases).toHaveLength(1);
    expect(r.report.cases[0]).toMatchObject({ name: "save-record", status: "passed", verdict: "passed", output: "Saved record-1." });
    expect(r.report.summary).toMatchObject({ passed: 1, failed: 0 });
    expect(r.seed).toBe(42);
    expect(r.buildHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(results()).toContain(r);
  });

  test("a failing check fails the drill with its message", async () => {
    const r = await runDrills({
      drill: "save-record",
      cwd,
      agent: ({ binding }) => {
        mockTool(binding, { mode: "sync", operation: SAVE })({ id: "record-1", text: "goodbye" });
      },
    });
    expect(r.verdict).toBe("failed");
    expect(r.failures).toEqual(['expected record-store.records.record-1.text to equal "hello"; it is "goodbye"']);
  });

  test("an agent that throws fails the drill with the agent's message, and is kept in the result", async () => {
    const boom = new Error("the model said no");
    const r = await runDrills({ drill: "sandbox", cwd, agent: async () => {
      throw boom;
    } });
    expect(r.verdict).toBe("failed");
    expect(r.failures).toEqual(["the agent failed: the model said no"]);
    expect(r.agentError).toBe(boom);
    expect(r.output).toBeUndefined();
  });

  test("a returned value that is not a string reaches the output checks as its JSON", async () => {
    const r = await runDrills({ drill: "sandbox", cwd, agent: () => ({ saved: ["record-1"] }) });
    expect(r.report.cases[0]?.output).toBe('{"saved":["record-1"]}');
    expect(r.output).toEqual({ saved: ["record-1"] });
  });
});

describe("per-test setup", () => {
  test("setup.scenario.toolOverrides are rules of scope test, recorded with the operation and kept in the build", async () => {
    const r = await runDrills({
      drill: "sandbox",
      suite,
      cwd,
      setup: { scenario: { toolOverrides: [busyOnce] } },
      agent: async ({ binding }) => {
        const save = mockTool(binding, { mode: "async", operation: SAVE });
        await save({ id: "record-1", text: "hi" }).catch(() => undefined);
        await save({ id: "record-1", text: "hi" });
      },
    });
    expect(r.evidence.map((e) => e.override)).toEqual([
      { id: "busy-once", scope: "test", outcome: "error", match_count: 1, remaining: 0 },
      null,
    ]);
    expect(r.build).toMatchObject({ test: { scenario: { toolOverrides: [{ id: "busy-once", times: 1 }] } } });
    expect(JSON.stringify(r.report.cases[0])).toContain('"busy-once"');
  });

  test("setup.tools.behaviorOverrides selects another behavior for the whole drill", async () => {
    const r = await runDrills({
      drill: "sandbox",
      cwd,
      setup: { tools: { behaviorOverrides: { "record-store/records.save": "save_slowly" } } },
      agent: ({ binding }) => mockTool(binding, { mode: "sync", operation: SAVE })({ id: "record-1", text: "hi" }),
    });
    expect(r.state).toMatchObject({ "record-store": { records: { "record-1": { text: "hi (slowly)" } } } });
  });

  test("a setup rule with an undeclared error code is INVALID_SETUP naming the key path", async () => {
    const bad = { ...busyOnce, outcome: { kind: "error" as const, code: "NOPE" } };
    const err = await runDrills({ drill: "sandbox", cwd, setup: { scenario: { toolOverrides: [bad] } }, agent: () => "" }).catch(
      (e: unknown) => e,
    );
    expect((err as EngineError).code).toBe("INVALID_SETUP");
    expect((err as EngineError).message).toContain("setup.scenario.toolOverrides[0].outcome.code");
  });

  test("seed sets the drill's seed", async () => {
    const r = await runDrills({ drill: "sandbox", cwd, seed: 7, agent: () => "" });
    expect(r.seed).toBe(7);
  });
});

describe("abandoning a drill", () => {
  test("an aborted signal ends the drill without a verdict; its binding answers DRILL_ENDED", async () => {
    const ac = new AbortController();
    let kept: ((id: string) => Promise<unknown>) | undefined;
    const run = runDrills({
      drill: "sandbox",
      cwd,
      signal: ac.signal,
      agent: async ({ binding }) => {
        kept = mockTool(binding, { mode: "async", operation: GET, input: (id: string) => ({ id }) });
        await kept("record-0");
        setTimeout(() => ac.abort(new Error("the test timed out")), 10);
        return new Promise<string>(() => undefined);
      },
    });
    await expect(run).rejects.toThrow("the test timed out");
    await expect(kept?.("record-0")).rejects.toMatchObject({ status: 410, envelope: { code: "DRILL_ENDED" } });
  });

  test("an already aborted signal starts no drill", async () => {
    const ac = new AbortController();
    ac.abort(new Error("cancelled before"));
    let called = false;
    await expect(runDrills({ drill: "sandbox", cwd, signal: ac.signal, agent: () => (called = true) })).rejects.toThrow("cancelled before");
    expect(called).toBe(false);
  });
});

describe("state, reset and evidence from the test", () => {
  test("state and evidence read the drill's world while it runs; reset restores it and keeps the evidence", async () => {
    await runDrills({
      drill: "sandbox",
      cwd,
      agent: async ({ binding }) => {
        const save = mockTool(binding, { mode: "async", operation: SAVE });
        await save({ id: "record-1", text: "hi" });
        expect(await state(binding)).toMatchObject({ "record-store": { records: { "record-1": { text: "hi" } } } });
        const seen = await evidence(binding);
        expect(seen.evidence.map((e) => e.operation)).toEqual(["record-store/records.save"]);
        expect(seen.events).toHaveLength(1);
        await reset(binding);
        const after = (await state(binding)) as { "record-store": { records: Record<string, unknown> } };
        expect(Object.keys(after["record-store"].records)).toEqual(["record-0"]);
        expect((await evidence(binding)).evidence).toHaveLength(1);
        expect((await evidence(binding, 1)).evidence).toHaveLength(0);
        await expect(mockTool(binding, { mode: "async", operation: GET })({ id: "record-1" })).rejects.toMatchObject({
          envelope: { code: "NOT_FOUND" },
        });
      },
    });
  });

  test("a whole-world reset restores rule counts; a package reset only those of its package", async () => {
    const r = await runDrills({
      drill: "sandbox",
      cwd,
      setup: { scenario: { toolOverrides: [busyOnce] } },
      agent: async ({ binding }) => {
        const save = mockTool(binding, { mode: "sync", operation: SAVE });
        const args = { id: "record-1", text: "hi" };
        expect(() => save(args)).toThrow(/BUSY/);
        expect(save(args)).toEqual({ id: "record-1", version: 1 });
        await reset(binding, "mail");
        expect(save(args)).toEqual({ id: "record-1", version: 2 });
        await reset(binding);
        expect(() => save(args)).toThrow(/BUSY/);
        expect(save(args)).toEqual({ id: "record-1", version: 1 });
        await reset(binding, "record-store");
        expect(() => save(args)).toThrow(/BUSY/);
      },
    });
    expect(r.evidence.map((e) => (e.override as { id?: string } | null)?.id ?? null)).toEqual([
      "busy-once",
      null,
      null,
      "busy-once",
      null,
      "busy-once",
    ]);
  });

  test("package reset restores only that package", async () => {
    await runDrills({
      drill: "sandbox",
      cwd,
      agent: async ({ binding }) => {
        mockTool(binding, { mode: "sync", operation: SAVE })({ id: "record-1", text: "hi" });
        mockTool(binding, { mode: "sync", operation: "mail/mail.send" })({ to: "ada" });
        await reset(binding, "mail");
        expect(await state(binding)).toMatchObject({ mail: { outbox: [] }, "record-store": { records: { "record-1": { text: "hi" } } } });
      },
    });
  });

  test("advanceClock moves the drill's virtual clock", async () => {
    await runDrills({
      drill: "sandbox",
      cwd,
      agent: async ({ binding }) => {
        expect(await advanceClock(binding, "10m")).toBe("2026-01-01T09:10:00Z");
      },
    });
  });
});
