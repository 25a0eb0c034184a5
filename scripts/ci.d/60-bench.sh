#!/usr/bin/env bash
# A smoke test of the benchmark table (bench/table, docs/performance.md):
# one round of 0.5 s (the median of three was a figure CI never reads),
# every row measured, every answer checked; the figures
# of a CI machine mean nothing and are only printed. The MCP TypeScript
# SDK's row runs when sdk/js's packages are installed (20-js.sh does).
set -euo pipefail
cd "$(dirname "$0")/../.."
flags=(-rounds 1 -d 500ms -warmup 200ms -starts 3 -check)
if [ -d sdk/js/node_modules/@modelcontextprotocol/sdk ] && [ -d sdk/js/node_modules/zod ]; then
	flags+=(-node-modules sdk/js/node_modules)
fi
go run ./bench/table "${flags[@]}"
echo "table: 1 passed, 0 failed"
