// Builds dist/esm (ES modules) and dist/cjs (CommonJS), each with its
// declarations, with the pinned TypeScript compiler (the CommonJS pass
// skips the type check the ESM pass did: noCheck); then writes the one
// file whose form differs between the two (locate.js).
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
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
