// The SDK's benchmark (not a test): `npm run build && DRYFIRE_BIN=... npm run bench`.
//
//   engine ready     spawn of `dryfire engine` to its ready line, p50 of 10
//   drill            one runDrills with a trivial agent on a warm engine, p50/p99 of 300
//   async call       one mockTool({mode: "async"}) call, p50/p99 of 3,000
//   sync call        one mockTool({mode: "sync"}) call, p50/p99 of 3,000
//   vitest 100       wall time of `vitest run` on a file of 100 drills (one test each)
//
// It uses the fixture suite of the SDK's tests (test/fixtures).
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { findBinary, runDrills } from "dryfire";
import { mockTool } from "dryfire/testing";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cwd = join(root, "test", "fixtures");
const SAVE = "record-store/records.save";
const GET = "record-store/records.get";

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const ms = (x) => `${x.toFixed(2)} ms`;
const us = (x) => `${(x * 1000).toFixed(0)} µs`;

async function engineReady() {
  const bin = findBinary().path;
  const t0 = performance.now();
  const child = spawn(bin, ["engine"], { stdio: ["pipe", "pipe", "inherit"], cwd });
  await new Promise((resolve, reject) => {
    child.stdout.once("data", resolve);
    child.once("exit", () => reject(new Error("engine exited")));
  });
  const t = performance.now() - t0;
  child.stdin.end();
  await new Promise((r) => child.once("exit", r));
  return t;
}

const ready = [];
for (let i = 0; i < 10; i++) ready.push(await engineReady());
console.log(`engine ready     p50 ${ms(pct(ready, 50))}  (min ${ms(Math.min(...ready))}, max ${ms(Math.max(...ready))})`);

// Warm the engine and the suite.
for (let i = 0; i < 20; i++) await runDrills({ drill: "sandbox", cwd, agent: () => "ok" });
const drills = [];
for (let i = 0; i < 300; i++) {
  const t0 = performance.now();
  await runDrills({ drill: "sandbox", cwd, agent: () => "ok" });
  drills.push(performance.now() - t0);
}
console.log(`drill            p50 ${ms(pct(drills, 50))}  p99 ${ms(pct(drills, 99))}`);

await runDrills({
  drill: "sandbox",
  cwd,
  agent: async ({ binding }) => {
    const save = mockTool(binding, { mode: "async", operation: SAVE });
    await save({ id: "record-1", text: "x" });
    for (const mode of ["async", "sync"]) {
      const get = mockTool(binding, { mode, operation: GET });
      for (let i = 0; i < 200; i++) await get({ id: "record-1" });
      const xs = [];
      for (let i = 0; i < 3000; i++) {
        const t0 = performance.now();
        await get({ id: "record-1" });
        xs.push(performance.now() - t0);
      }
      console.log(`${mode} call${mode === "sync" ? " " : ""}       p50 ${us(pct(xs, 50))}  p99 ${us(pct(xs, 99))}`);
    }
  },
});

const dir = mkdtempSync(join(root, "test", ".bench-"));
try {
  const file = join(dir, "hundred.test.ts");
  writeFileSync(
    file,
    `import { expect, test } from "vitest";
import { runDrills } from "dryfire";
import { mockTool } from "dryfire/testing";
const cwd = ${JSON.stringify(cwd)};
for (let i = 0; i < 100; i++) {
  test("drill " + i, async () => {
    const r = await runDrills({ drill: "save-record", cwd, agent: async ({ binding }) => {
      await mockTool(binding, { mode: "async", operation: "${SAVE}" })({ id: "record-1", text: "hello" });
      return "saved";
    } });
    expect(r.verdict).toBe("passed");
  });
}
`,
  );
  const vitest = join(root, "node_modules", ".bin", "vitest");
  const t0 = performance.now();
  execFileSync(vitest, ["run", "--root", root, file], { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, CI: "true" } });
  console.log(`vitest 100       ${ms(performance.now() - t0)} wall (vitest start, engine start, 100 drills)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
