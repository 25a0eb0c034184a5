#!/usr/bin/env bash
# The TypeScript SDK (sdk/js, npm dryfire): build it (ESM + CommonJS with
# declarations), type-check its tests and run the Vitest files that need
# no engine. Pinned packages from sdk/js/package-lock.json go into
# sdk/js/node_modules (git-ignored). (The engine tests, the packed install
# and the examples join once `dryfire engine` is on main.)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

cd "$root/sdk/js"
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
npx --no-install tsc -p tsconfig.test.json
npx --no-install vitest run test/binary.test.ts test/ready.test.ts
