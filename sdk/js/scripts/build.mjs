// Builds dist/esm (ES modules) and dist/cjs (CommonJS), each with its
// declarations, with the pinned TypeScript compiler (the CommonJS pass
// skips the type check the ESM pass did: noCheck); then writes the one
// file whose form differs between the two (locate.js). As the prepare
// script of `npm install ../path/to/dryfire/sdk/js` run from another
// project, it also builds the dryfire binary from the clone when Go is on
// PATH (see buildBinary).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
if (!existsSync(tsc) && process.env.npm_lifecycle_event === "prepare") {
  // `npm install ../path/to/sdk/js` (a folder, or a git dependency that
  // npm did not set up) runs prepare without this package's
  // devDependencies: install the pinned ones first, scripts off.
  console.error("build: installing the SDK's pinned build tools into sdk/js/node_modules (npm ci) to build dist/");
  execFileSync("npm", ["ci", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: root, stdio: "inherit" });
}
if (!existsSync(tsc)) {
  console.error(`build: ${tsc} is missing: run npm ci in sdk/js first`);
  process.exit(1);
}
rmSync(join(root, "dist"), { recursive: true, force: true });
for (const project of ["tsconfig.json", "tsconfig.cjs.json"]) {
  try {
    execFileSync(process.execPath, [tsc, "-p", join(root, project)], { stdio: "inherit" });
  } catch {
    console.error(`build: tsc -p ${project} failed (its errors are above)`);
    process.exit(1);
  }
}
writeFileSync(join(root, "dist", "cjs", "package.json"), JSON.stringify({ type: "commonjs" }) + "\n");
writeFileSync(
  join(root, "dist", "esm", "locate.js"),
  `// resolveFromHere resolves a package from where this SDK is installed.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
const require = createRequire(import.meta.url);
export function resolveFromHere(id) {
    return require.resolve(id);
}
export function packageRoot() {
    return fileURLToPath(new URL("../..", import.meta.url));
}
`,
);

// buildBinary builds cmd/dryfire of the clone this folder is sdk/js of into
// the clone's own folder of this platform's package (npm/cli-KEY/bin,
// git-ignored), where the SDK looks after an installed platform package
// (src/engine.ts findBinary). With Go's flags of the release (static,
// -trimpath), so that the compiles come from the Go build cache whatever
// folder the clone is in.
function buildBinary() {
  const top = join(root, "..", "..");
  let mod = "";
  try {
    mod = readFileSync(join(top, "go.mod"), "utf8");
  } catch {
    // not a clone
  }
  if (!mod.startsWith("module github.com/dryfire-dev/dryfire\n")) return;
  const exe = process.platform === "win32" ? "dryfire.exe" : "dryfire";
  const out = join(root, "npm", `cli-${process.platform}-${process.arch}`, "bin", exe);
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
  } catch {
    console.error(`build: Go is not on PATH: no dryfire binary built into ${out}; the SDK will look in DRYFIRE_BIN and on PATH`);
    return;
  }
  console.error(`build: building the dryfire binary from ${top} into ${out}`);
  mkdirSync(dirname(out), { recursive: true });
  try {
    execFileSync("go", ["build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", out, "./cmd/dryfire"], {
      cwd: top,
      env: { ...process.env, CGO_ENABLED: "0" },
      stdio: "inherit",
    });
  } catch {
    console.error(`build: go build ./cmd/dryfire in ${top} failed (its errors are above)`);
    process.exit(1);
  }
}

const from = process.env.INIT_CWD;
if (process.env.npm_lifecycle_event === "prepare" && from !== undefined && resolve(from) !== resolve(root)) buildBinary();
