// Many drills at once in one worker: each has its own world, evidence and
// verdict, and none sees another's state.
import { expect, test } from "vitest";
import { runDrills } from "dryfire";
import { mockTool } from "dryfire/testing";
import { cwd, GET, SAVE } from "./helpers.js";

test("16 concurrent drills in one worker never share state", async () => {
  const n = 16;
  const runs = Array.from({ length: n }, (_, i) =>
    runDrills({
      drill: "sandbox",
      cwd,
      agent: async ({ binding }) => {
        const save = mockTool(binding, { mode: "async", operation: SAVE, input: (id: string, text: string) => ({ id, text }) });
        const get = mockTool(binding, { mode: i % 2 === 0 ? "sync" : "async", operation: GET, input: (id: string) => ({ id }) });
        // Interleave: every drill saves twice with awaits between, and
        // reads back its own record only.
        await save(`r${i}`, `text ${i}`);
        await new Promise((r) => setTimeout(r, (i * 7) % 5));
        const again = await save(`r${i}`, `text ${i} again`);
        const read = (await get(`r${i}`)) as { text: string; version: number };
        for (let j = 0; j < n; j++) {
          if (j === i) continue;
          await expect(Promise.resolve().then(() => get(`r${j}`))).rejects.toMatchObject({ envelope: { code: "NOT_FOUND" } });
        }
        return `${read.text} v${again.version}`;
      },
    }),
  );
  const results = await Promise.all(runs);
  results.forEach((r, i) => {
    expect(r.output).toBe(`text ${i} again v2`);
    const records = (r.state["record-store"] as { records: Record<string, unknown> }).records;
    expect(Object.keys(records).sort()).toEqual(["record-0", `r${i}`].sort());
    expect(r.evidence.map((e) => e.seq)).toEqual(Array.from({ length: 3 + n - 1 }, (_, k) => k + 1));
    expect(r.evidence.filter((e) => e.operation === "record-store/records.save").map((e) => e.arguments)).toEqual([
      { id: `r${i}`, text: `text ${i}` },
      { id: `r${i}`, text: `text ${i} again` },
    ]);
  });
  expect(new Set(results.map((r) => r.report.cases[0]?.name)).size).toBe(1);
});
