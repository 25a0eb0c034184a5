// The binary lookup and the engine's ready line, against real files and
// real child processes (small shell scripts standing in for a binary).
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { findBinary } from "dryfire";

function script(dir: string, name: string, body: string): string {
  const p = join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

describe("binary lookup: DRYFIRE_BIN, then the platform package, then PATH", () => {
  const dir = mkdtempSync(join(tmpdir(), "dryfire-bin-"));
  const onPath = script(dir, "dryfire", "exit 0");
  const other = script(dir, "other-dryfire", "exit 0");

  test("DRYFIRE_BIN wins over PATH", () => {
    expect(findBinary({ DRYFIRE_BIN: other, PATH: dir })).toEqual({ path: other, source: "DRYFIRE_BIN" });
  });

  test("PATH when nothing else is there", () => {
    expect(findBinary({ PATH: `/nonexistent:${dir}` })).toEqual({ path: onPath, source: "PATH" });
  });

  test("a DRYFIRE_BIN that is not a file is an error, not a fallback", () => {
    expect(() => findBinary({ DRYFIRE_BIN: join(dir, "missing"), PATH: dir })).toThrow(
      /DRYFIRE_BIN is ".*missing", which is not a file/,
    );
  });

  test("none found is one error naming the three places and how to install", () => {
    let message = "";
    try {
      findBinary({ PATH: "/nonexistent" });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain("DRYFIRE_BIN (unset)");
    expect(message).toContain(`@dryfire/cli-${process.platform}-${process.arch}`);
    expect(message).toContain("on PATH");
    expect(message).toContain("from a tarball or a folder");
    expect(message).toContain("go install github.com/dryfire-dev/dryfire/cmd/dryfire@latest");
  });
});
