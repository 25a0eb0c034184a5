// The platform packages: one npm package per release target, each holding
// only the dryfire binary, each an optional dependency of dryfire that
// npm installs only where its os/cpu fields match (the esbuild pattern).

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

const GO_INSTALL =
  "build it with `go install github.com/dryfire-dev/dryfire/cmd/dryfire@latest` and put it on PATH or in DRYFIRE_BIN";

/**
 * missingBinary is the error of a lookup that found nothing: what it looked
 * at, why the platform package may be missing, and what to do.
 */
export function missingBinary(platform: string = process.platform, arch: string = process.arch): string {
  const key = `${platform}-${arch}`;
  const pkg = platformPackage(platform, arch);
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
