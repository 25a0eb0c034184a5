// The platform packages: one npm package per release target, each holding
// only the dryfire binary, each an optional dependency of dryfire that
// npm installs only where its os/cpu fields match (the esbuild pattern).

import { join } from "node:path";

/** The release targets, as Node names them (`${process.platform}-${process.arch}`). */
export const PLATFORMS = ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64", "win32-x64"] as const;

/** The platform package for platform-arch, or undefined when dryfire ships none for it. */
export function platformPackage(platform: string = process.platform, arch: string = process.arch): string | undefined {
  const key = `${platform}-${arch}`;
  return (PLATFORMS as readonly string[]).includes(key) ? `@dryfire/cli-${key}` : undefined;
}

/** The binary's path inside a platform package. */
export function binaryName(platform: string = process.platform): string {
  return platform === "win32" ? "dryfire.exe" : "dryfire";
}

/**
 * cloneBinary is where `npm install ../path/to/dryfire/sdk/js` builds the
 * binary (its prepare script, when Go is on PATH): the clone's own folder of
 * this platform's package, sdk/js/npm/cli-<platform>-<arch>/bin.
 */
export function cloneBinary(sdkRoot: string, platform: string = process.platform, arch: string = process.arch): string {
  return join(sdkRoot, "npm", `cli-${platform}-${arch}`, "bin", binaryName(platform));
}

/** A dryfire clone this SDK was installed from, for the error of a missing binary. */
export interface Clone {
  /** The clone's root (where go.mod and cmd/dryfire are). */
  root: string;
  /** Where its prepare script builds the binary. */
  binary: string;
  /** Whether `go` is on PATH now. */
  go: boolean;
}

const GO_INSTALL =
  "build it with `go install github.com/dryfire-dev/dryfire/cmd/dryfire@latest` and put it on PATH or in DRYFIRE_BIN";

/**
 * missingBinary is the error of a lookup that found nothing: what it looked
 * at, why the platform package may be missing, and what to do. With clone,
 * the SDK is the one of a dryfire clone (installed from its folder).
 */
export function missingBinary(platform: string = process.platform, arch: string = process.arch, clone?: Clone): string {
  const key = `${platform}-${arch}`;
  const pkg = platformPackage(platform, arch);
  if (clone !== undefined) {
    const why = clone.go
      ? "Go is on PATH, so the build did not run (npm install --ignore-scripts, an allowScripts denial, or sdk/js's own npm ci, which builds none) or failed"
      : "Go is not on PATH here";
    const exe = binaryName(platform);
    return (
      `dryfire: no dryfire binary found. Looked in DRYFIRE_BIN (unset)` +
      (pkg === undefined ? "" : `, in the platform package ${pkg} (not installed)`) +
      `, in ${clone.binary} and on PATH. This SDK is the one of the dryfire clone at ${clone.root}: ` +
      `installing it from its folder (npm install ${clone.root}/sdk/js) builds the binary into ${clone.binary} ` +
      `when Go 1.26 or later is on PATH; ${why}. Install Go (https://go.dev/dl) and run that npm install again, ` +
      `or build the binary yourself (cd ${clone.root} && go build -o ${exe} ./cmd/dryfire) and set ` +
      `DRYFIRE_BIN=${clone.root}/${exe}.`
    );
  }
  if (pkg === undefined) {
    return (
      `dryfire: no dryfire binary found. Looked in DRYFIRE_BIN (unset) and on PATH; dryfire ships no ` +
      `platform package for ${key} (only for ${PLATFORMS.join(", ")}): ${GO_INSTALL}.`
    );
  }
  return (
    `dryfire: no dryfire binary found. Looked in DRYFIRE_BIN (unset), in the platform package ${pkg} ` +
    `(not installed), and on PATH. npm installs ${pkg} with dryfire, as an optional dependency, only ` +
    `when it installs dryfire from a registry; it skips it without a word when dryfire comes from a ` +
    `tarball or a folder (then install ${pkg}'s tarball of the same release too: ` +
    `npm install ./dryfire-cli-${key}-VERSION.tgz), with --omit=optional, or with --os/--cpu naming ` +
    `another platform. Or ${GO_INSTALL}.`
  );
}
