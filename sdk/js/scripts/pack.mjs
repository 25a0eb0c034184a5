// Packs the SDK and its platform packages for release or for the CI's
// install test (it builds nothing: run `npm run build` first):
//
//   node scripts/pack.mjs --bin PATH --out DIR    the binary for this machine's platform
//   node scripts/pack.mjs --bins DIR --out DIR    DIR/<platform>-<arch>/dryfire[.exe], each target there
//
// It stages dist/ and README.md with the published package.json
// (devDependencies and scripts dropped, every platform package of
// src/platform.ts an optional dependency, as esbuild does), stages each
// npm/cli-<platform>-<arch> with its binary as bin/dryfire (bin/dryfire.exe
// on win32) and nothing else, and runs `npm pack` on each into DIR. It
// also packs alias/ (@firedrill/sdk, re-exporting dryfire and dryfire/testing).
// It prints the tarballs' paths, one a line: the SDK first, the alias
// second.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { bin: { type: "string" }, bins: { type: "string" }, out: { type: "string" } } });
if ((values.bin === undefined) === (values.bins === undefined) || values.out === undefined) {
  console.error("usage: node scripts/pack.mjs (--bin PATH-TO-DRYFIRE | --bins DIR) --out DIR");
  process.exit(2);
}
if (!existsSync(join(root, "dist", "esm", "index.js"))) {
  console.error("pack: sdk/js/dist is missing: run `npm run build` first");
  process.exit(1);
}
const { PLATFORMS, binaryName } = await import(join(root, "dist", "esm", "platform.js"));
const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const stage = mkdtempSync(join(tmpdir(), "dryfire-pack-"));
const readJSON = (p) => JSON.parse(readFileSync(p, "utf8"));

// binaries: platform-arch -> the binary to pack.
const binaries = new Map();
if (values.bin !== undefined) {
  binaries.set(`${process.platform}-${process.arch}`, resolve(values.bin));
} else {
  for (const key of PLATFORMS) {
    const p = join(resolve(values.bins), key, binaryName(key.split("-")[0]));
    if (existsSync(p)) binaries.set(key, p);
  }
  if (binaries.size === 0) {
    console.error(`pack: no binary under ${values.bins} (want ${values.bins}/<platform>-<arch>/dryfire, e.g. linux-x64)`);
    process.exit(1);
  }
}

function pack(dir) {
  const text = execFileSync("npm", ["pack", "--json", "--pack-destination", out], { cwd: dir, encoding: "utf8" });
  return join(out, JSON.parse(text)[0].filename);
}

try {
  const pkg = readJSON(join(root, "package.json"));
  delete pkg.devDependencies;
  delete pkg.overrides;
  delete pkg.scripts;
  pkg.optionalDependencies = {};
  for (const key of PLATFORMS) {
    const plat = readJSON(join(root, "npm", `cli-${key}`, "package.json"));
    if (plat.version !== pkg.version) throw new Error(`pack: npm/cli-${key} is version ${plat.version}, dryfire ${pkg.version}`);
    pkg.optionalDependencies[plat.name] = plat.version;
  }
  const sdk = join(stage, "dryfire");
  mkdirSync(sdk);
  writeFileSync(join(sdk, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  cpSync(join(root, "dist"), join(sdk, "dist"), { recursive: true });
  copyFileSync(join(root, "README.md"), join(sdk, "README.md"));
  const tarballs = [pack(sdk)];

  // @firedrill/sdk: the same SDK under the product notes' names.
  const alias = readJSON(join(root, "alias", "package.json"));
  if (alias.version !== pkg.version || alias.dependencies.dryfire !== pkg.version) {
    throw new Error(`pack: alias/package.json is ${alias.version} (dryfire ${alias.dependencies.dryfire}), dryfire ${pkg.version}`);
  }
  tarballs.push(pack(join(root, "alias")));

  for (const [key, binary] of binaries) {
    const dir = join(stage, `cli-${key}`);
    const name = binaryName(key.split("-")[0]);
    mkdirSync(join(dir, "bin"), { recursive: true });
    copyFileSync(join(root, "npm", `cli-${key}`, "package.json"), join(dir, "package.json"));
    copyFileSync(binary, join(dir, "bin", name));
    chmodSync(join(dir, "bin", name), 0o755);
    tarballs.push(pack(dir));
  }
  console.log(tarballs.join("\n"));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
