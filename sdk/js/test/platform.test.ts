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

  test("a platform with no package says so and lists the ones there are", () => {
    expect(platformPackage("freebsd", "x64")).toBeUndefined();
    const message = missingBinary("freebsd", "x64");
    expect(message).toContain("dryfire ships no platform package for freebsd-x64 (only for darwin-arm64, darwin-x64, linux-arm64, linux-x64, win32-x64)");
    expect(message).not.toContain("@dryfire/cli-");
  });
});
