#!/usr/bin/env bash
# docs/ci/dryfire.yml, the GitHub Actions workflow docs/ci.md gives (run by
# internal/cli's TestDocsShardWorkflow, shown word for word by the page:
# TestDocsWorkflowIsTheFile), linted by actionlint: rhysd/actionlint at a
# pinned version, built from its Go module into the build cache (about
# 20 s the first time, under 2 s after), with shellcheck for the run:
# scripts (Debian's shellcheck, installed when missing and CI runs as
# root; without it actionlint skips that check and says so here).
set -euo pipefail
cd "$(dirname "$0")/../.."
version=v1.7.12
t0=$SECONDS
if ! command -v shellcheck >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	apt-get install -y -q shellcheck >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q shellcheck >/dev/null; } || true
fi
if command -v shellcheck >/dev/null; then
	with="with $(shellcheck --version | sed -n 's/^version: /shellcheck /p')"
else
	with="without shellcheck (not installed: the run: scripts are not checked)"
fi
go run "github.com/rhysd/actionlint/cmd/actionlint@$version" -no-color docs/ci/dryfire.yml
echo "-- actionlint $version docs/ci/dryfire.yml, $with: ok ($((SECONDS - t0)) s)"
