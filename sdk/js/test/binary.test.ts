// The binary lookup and the engine's ready line, against real files and
// real child processes (small shell scripts standing in for a binary).
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from "node:fs";
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

describe("binary lookup: DRYFIRE_BIN, then the platform package, then a clone's build, then PATH", () => {
  const dir = mkdtempSync(join(tmpdir(), "dryfire-bin-"));
  const onPath = script(dir, "dryfire", "exit 0");
  const other = script(dir, "other-dryfire", "exit 0");
  // This SDK is sdk/js of a dryfire clone, as when installed from its folder;
  // after such an install the clone's build (step 3) is found before PATH.
  const clone = join(__dirname, "..", "..", "..");
  const built = join(clone, "sdk", "js", "npm", `cli-${process.platform}-${process.arch}`, "bin", "dryfire");
  const cloneBuilt = existsSync(built);

  test("DRYFIRE_BIN wins over PATH", () => {
    expect(findBinary({ DRYFIRE_BIN: other, PATH: dir })).toEqual({ path: other, source: "DRYFIRE_BIN" });
  });

  test.skipIf(cloneBuilt)("PATH when nothing else is there", () => {
    expect(findBinary({ PATH: `/nonexistent:${dir}` })).toEqual({ path: onPath, source: "PATH" });
  });

  test("a DRYFIRE_BIN that is not a file is an error, not a fallback", () => {
    expect(() => findBinary({ DRYFIRE_BIN: join(dir, "missing"), PATH: dir })).toThrow(
      /DRYFIRE_BIN is ".*missing", which is not a file/,
    );
  });

  test.skipIf(cloneBuilt)("none found in a clone is one error naming the places, the clone and how to build the binary", () => {
    let message = "";
    try {
      findBinary({ PATH: "/nonexistent" });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain("DRYFIRE_BIN (unset)");
    expect(message).toContain(`in the platform package @dryfire/cli-${process.platform}-${process.arch} (not installed)`);
    expect(message).toContain(`in ${built} and on PATH`);
    expect(message).toContain(`This SDK is the one of the dryfire clone at ${clone}`);
    expect(message).toContain("Go is not on PATH here");
    expect(message).toContain(`cd ${clone} && go build -o dryfire ./cmd/dryfire`);
    expect(message).toContain(`DRYFIRE_BIN=${join(clone, "dryfire")}`);
  });

  test.skipIf(cloneBuilt)("with Go on PATH, the error says the clone's build did not run or failed", () => {
    const goDir = mkdtempSync(join(tmpdir(), "dryfire-go-"));
    script(goDir, "go", "exit 0");
    expect(() => findBinary({ PATH: goDir })).toThrow(/Go is on PATH, so the build did not run \(npm install --ignore-scripts/);
  });
});
