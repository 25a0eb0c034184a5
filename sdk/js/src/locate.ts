// resolveFromHere resolves a package from where this SDK is installed (its
// optional platform package sits beside it). This file is the CommonJS
// form; the build writes the ESM form (createRequire(import.meta.url)).

export function resolveFromHere(id: string): string {
  return require.resolve(id);
}
