#!/usr/bin/env bash
# The TypeScript SDK (sdk/js, npm dryfire): build it (ESM + CommonJS with
# declarations) and run its Vitest suite. Pinned packages from
# sdk/js/package-lock.json go into sdk/js/node_modules (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

cd "$root/sdk/js"
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
npx --no-install tsc -p tsconfig.test.json
npx --no-install vitest run
