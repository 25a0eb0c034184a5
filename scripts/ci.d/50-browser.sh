#!/usr/bin/env bash
# The HTML report (run --html) in a real headless browser: Debian's
# chromium (lib/chromium.sh installs it when missing), driven by
# playwright-core (pinned in e2e/browser, installed into its git-ignored
# node_modules). The report opens, a failed case expands on click, the
# filters work, and a 10,000-case report is written in at most 1 s and
# opens in at most 2 s (e2e/browser/report.test.mjs prints the figures).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/ci.d/lib/chromium.sh
out=.cache/browser
mkdir -p "$out"
go build -o "$out/dryfire" ./cmd/dryfire
(cd e2e/browser && npm ci --no-audit --no-fund --silent)
DRYFIRE_BIN=$PWD/$out/dryfire node --test e2e/browser/report.test.mjs
