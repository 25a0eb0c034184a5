// resolveFromHere resolves a package from where this SDK is installed (its
// optional platform package sits beside it); packageRoot is the SDK's own
// folder (dist/cjs/../..). This file is the CommonJS form; the build writes
// the ESM form (createRequire(import.meta.url), import.meta.url).

import { join } from "node:path";

export function resolveFromHere(id: string): string {
  return require.resolve(id);
}

export function packageRoot(): string {
  return join(__dirname, "..", "..");
}
