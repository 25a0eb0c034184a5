// Builds dist/esm (ES modules) and dist/cjs (CommonJS), each with its
// declarations, with the pinned TypeScript compiler (the CommonJS pass
// skips the type check the ESM pass did: noCheck); then writes the one
// file whose form differs between the two (locate.js).
import { execFileSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
if (!existsSync(tsc) && process.env.npm_lifecycle_event === "prepare") {
  // `npm install ../path/to/sdk/js` (a folder, or a git dependency that
  // npm did not set up) runs prepare without this package's
  // devDependencies: install the pinned ones first, scripts off.
  console.error("build: installing the SDK's pinned build tools into sdk/js/node_modules (npm ci) to build dist/");
  execFileSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: root, stdio: "inherit" });
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
const require = createRequire(import.meta.url);
export function resolveFromHere(id) {
    return require.resolve(id);
}
`,
);
