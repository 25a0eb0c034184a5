// Packs the SDK and its platform package for release or for the CI's
// install test: `node scripts/pack.mjs --bin PATH --out DIR` builds nothing
// (run the build first); it stages dist/ and README.md with the published
// package.json (devDependencies dropped, the platform package added as an
// optional dependency), stages npm/cli-<platform>-<arch> with the binary
// at PATH as bin/dryfire, and runs `npm pack` on both into DIR. It prints
// the two tarballs' paths, one a line.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { bin: { type: "string" }, out: { type: "string" } } });
if (values.bin === undefined || values.out === undefined) {
  console.error("usage: node scripts/pack.mjs --bin PATH-TO-DRYFIRE --out DIR");
  process.exit(2);
}
if (!existsSync(join(root, "dist", "esm", "index.js"))) {
  console.error("pack: sdk/js/dist is missing: run `npm run build` first");
  process.exit(1);
}
const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const stage = mkdtempSync(join(tmpdir(), "dryfire-pack-"));
const platform = `cli-${process.platform}-${process.arch}`;

function pack(dir) {
  const text = execFileSync("npm", ["pack", "--json", "--pack-destination", out], { cwd: dir, encoding: "utf8" });
  return join(out, JSON.parse(text)[0].filename);
}

try {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const plat = JSON.parse(readFileSync(join(root, "npm", platform, "package.json"), "utf8"));
  delete pkg.devDependencies;
  delete pkg.overrides;
  delete pkg.scripts;
  pkg.optionalDependencies = { [plat.name]: plat.version };
  const sdk = join(stage, "dryfire");
  mkdirSync(sdk);
  writeFileSync(join(sdk, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  cpSync(join(root, "dist"), join(sdk, "dist"), { recursive: true });
  copyFileSync(join(root, "README.md"), join(sdk, "README.md"));

  const bin = join(stage, platform);
  mkdirSync(join(bin, "bin"), { recursive: true });
  copyFileSync(join(root, "npm", platform, "package.json"), join(bin, "package.json"));
  copyFileSync(resolve(values.bin), join(bin, "bin", "dryfire"));
  chmodSync(join(bin, "bin", "dryfire"), 0o755);

  console.log(pack(sdk));
  console.log(pack(bin));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
