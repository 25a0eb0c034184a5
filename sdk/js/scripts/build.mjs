// Builds dist/esm (ES modules) and dist/cjs (CommonJS), each with its
// declarations, with the pinned TypeScript compiler (the CommonJS pass
// skips the type check the ESM pass did: noCheck); then writes the one
// file whose form differs between the two (locate.js). As the prepare
// script of `npm install ../path/to/dryfire/sdk/js` run from another
// project, it also builds the dryfire binary from the clone when Go is on
// PATH (see buildBinary).
//
// npm runs that prepare script again at every later `npm install` of the
// project that installed the folder, and hides its output: from another
// project, nothing is built when dist/ is newer than its sources and the
// binary newer than the clone's Go files, and what it does is also said
// on the terminal (say).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const top = join(root, "..", "..");
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const from = process.env.INIT_CWD;
const installed = process.env.npm_lifecycle_event === "prepare" && from !== undefined && resolve(from) !== resolve(root);
const exe = process.platform === "win32" ? "dryfire.exe" : "dryfire";
const binary = join(root, "npm", `cli-${process.platform}-${process.arch}`, "bin", exe);

// say writes a line on standard error and, when npm hides that (a
// prepare script of an install, without --foreground-scripts, not in CI),
// on the terminal too.
function say(line) {
  console.error(line);
  if (!installed || process.env.npm_config_foreground_scripts === "true" || process.env.CI || process.platform === "win32") return;
  try {
    writeFileSync("/dev/tty", `dryfire: ${line}\n`);
  } catch {
    // no terminal
  }
}

// newest is the latest modification time (ms) of the files under dir
// whose names pass keep, skipping node_modules, dist and dot folders.
function newest(dir, keep) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith(".") || e.name === "node_modules" || e.name === "dist") continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p, keep));
    else if (keep(e.name)) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

function mtime(p) {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}

// upToDate says whether dist/ (and, in a clone, the binary) are newer
// than what they are built from.
function upToDate() {
  const built = Math.min(mtime(join(root, "dist", "esm", "index.js")), mtime(join(root, "dist", "cjs", "index.js")));
  const sources = Math.max(newest(join(root, "src"), () => true), ...["package.json", "tsconfig.json", "tsconfig.cjs.json", join("scripts", "build.mjs")].map((f) => mtime(join(root, f))));
  if (built === 0 || built < sources) return false;
  if (!isClone()) return true;
  return mtime(binary) > newest(top, (n) => n.endsWith(".go") || n === "go.mod" || n === "go.sum");
}

function isClone() {
  try {
    return readFileSync(join(top, "go.mod"), "utf8").startsWith("module github.com/dryfire-dev/dryfire\n");
  } catch {
    return false;
  }
}

if (installed && upToDate()) {
  say(`the SDK in ${root} is built already (dist/ and the binary are newer than their sources): nothing to do`);
  process.exit(0);
}
if (installed) say(`building the SDK in ${root}: its build tools, dist/ and the dryfire binary (about a minute the first time; npm prints nothing meanwhile)`);
if (!existsSync(tsc) && process.env.npm_lifecycle_event === "prepare") {
  // `npm install ../path/to/sdk/js` (a folder, or a git dependency that
  // npm did not set up) runs prepare without this package's
  // devDependencies: install the pinned ones first, scripts off.
  say("installing the SDK's pinned build tools into sdk/js/node_modules (npm ci) to build dist/");
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
  if (!isClone()) return;
  const out = binary;
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
  } catch {
    console.error(`build: Go is not on PATH: no dryfire binary built into ${out}; the SDK will look in DRYFIRE_BIN and on PATH`);
    return;
  }
  say(`building the dryfire binary from ${top} into ${out}`);
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

if (installed) {
  buildBinary();
  say("the SDK is built");
}
