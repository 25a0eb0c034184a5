// Starting the engine: the SDK reads one ready line and refuses what is not
// a dryfire engine of protocol 1, with a message saying what it found.
// Small shell scripts stand in for binaries that misbehave.
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { runDrills } from "dryfire";

const dir = mkdtempSync(join(tmpdir(), "dryfire-ready-"));
const saved = process.env.DRYFIRE_BIN;
afterEach(() => {
  if (saved === undefined) delete process.env.DRYFIRE_BIN;
  else process.env.DRYFIRE_BIN = saved;
});

function binary(name: string, body: string): string {
  const p = join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

const agent = () => "unused";

test("an engine of another protocol is refused, naming both versions", async () => {
  process.env.DRYFIRE_BIN = binary(
    "future",
    `echo '{"engine":"dryfire","protocol":2,"version":"9.0.0","url":"http://127.0.0.1:1","token":"x"}'; cat >/dev/null`,
  );
  await expect(runDrills({ drill: "x", agent })).rejects.toThrow(
    /\(dryfire 9\.0\.0\) speaks engine protocol 2; this SDK \(npm dryfire 0\.1\.0-dev\) speaks protocol 1/,
  );
});

test("a program that is not an engine is named with its first line", async () => {
  process.env.DRYFIRE_BIN = binary("hello", "echo hello; cat >/dev/null");
  await expect(runDrills({ drill: "x", agent })).rejects.toThrow(/is not a dryfire engine: its first line was "hello"/);
});

test("an engine that exits before it is ready says so", async () => {
  process.env.DRYFIRE_BIN = binary("dies", "echo 'boom' >&2; exit 3");
  await expect(runDrills({ drill: "x", agent })).rejects.toThrow(/exited \(code 3\) before it was ready/);
});

test("the engine gets the subcommand engine and this process's working directory", async () => {
  const out = join(dir, "argv");
  process.env.DRYFIRE_BIN = binary("argv", `echo "$@ $(pwd)" > ${out}; exit 1`);
  await expect(runDrills({ drill: "x", agent })).rejects.toThrow(/before it was ready/);
  const { readFileSync } = await import("node:fs");
  expect(readFileSync(out, "utf8").trim()).toBe(`engine ${process.cwd()}`);
});
