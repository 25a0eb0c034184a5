// The platform packages (npm/cli-*) against the lookup's table, and the
// lookup's error for a missing one, for every target and for one dryfire
// ships no package for.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { binaryName, missingBinary, platformPackage, PLATFORMS } from "../src/platform.js";

const root = join(__dirname, "..");
const sdk = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

describe("one platform package per target, holding only the binary", () => {
  test.each(PLATFORMS)("npm/cli-%s", (key) => {
    const [platform, arch] = key.split("-") as [string, string];
    const pkg = JSON.parse(readFileSync(join(root, "npm", `cli-${key}`, "package.json"), "utf8"));
    expect(pkg.name).toBe(platformPackage(platform, arch));
    expect(pkg.version).toBe(sdk.version);
    expect(pkg.os).toEqual([platform]);
    expect(pkg.cpu).toEqual([arch]);
    expect(pkg.files).toEqual([`bin/${binaryName(platform)}`]);
  });
});

describe("the error of a missing binary names this platform's package and what skips it", () => {
  test.each(PLATFORMS)("%s", (key) => {
    const [platform, arch] = key.split("-") as [string, string];
    const message = missingBinary(platform, arch);
    expect(message).toContain(`in the platform package @dryfire/cli-${key} (not installed)`);
    expect(message).toContain("from a tarball or a folder");
    expect(message).toContain(`npm install ./dryfire-cli-${key}-VERSION.tgz`);
    expect(message).toContain("go install github.com/dryfire-dev/dryfire/cmd/dryfire@latest");
    expect(message).not.toContain("npm install dryfire installs it");
  });

  test("an SDK of a clone names the clone, where its prepare builds the binary, and the go build", () => {
    const message = missingBinary("linux", "x64", { root: "/src/dryfire", binary: "/src/dryfire/sdk/js/npm/cli-linux-x64/bin/dryfire", go: false });
    expect(message).toContain("in the platform package @dryfire/cli-linux-x64 (not installed), in /src/dryfire/sdk/js/npm/cli-linux-x64/bin/dryfire and on PATH");
    expect(message).toContain("npm install /src/dryfire/sdk/js) builds the binary into /src/dryfire/sdk/js/npm/cli-linux-x64/bin/dryfire when Go 1.26 or later is on PATH; Go is not on PATH here");
    expect(message).toContain("cd /src/dryfire && go build -o dryfire ./cmd/dryfire) and set DRYFIRE_BIN=/src/dryfire/dryfire");
    expect(missingBinary("win32", "x64", { root: "C:/dryfire", binary: "b", go: true })).toContain(
      "Go is on PATH, so the build did not run",
    );
    expect(missingBinary("win32", "x64", { root: "C:/dryfire", binary: "b", go: true })).toContain("go build -o dryfire.exe");
  });

  test("a platform with no package says so and lists the ones there are", () => {
    expect(platformPackage("freebsd", "x64")).toBeUndefined();
    const message = missingBinary("freebsd", "x64");
    expect(message).toContain("dryfire ships no platform package for freebsd-x64 (only for darwin-arm64, darwin-x64, linux-arm64, linux-x64, win32-x64)");
    expect(message).not.toContain("@dryfire/cli-");
  });
});
