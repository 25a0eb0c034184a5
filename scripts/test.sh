#!/usr/bin/env bash
# The test command: what the README gives and .ci/run calls.
#
# It runs the Go tests (race detector on), then every scripts/ci.d/*.sh in
# lexical order: the SDKs' and conformance suites, each of which installs
# what it needs (pinned npm and PyPI packages into git-ignored folders)
# and prints its own runner's summary (vitest, jest, pytest). Any failure
# fails the whole command; the parts after it still run, so that one
# report shows every broken part.
set -uo pipefail
cd "$(dirname "$0")/.."

status=0
step() {
	local name=$1
	shift
	echo
	echo "==> $name"
	local t0=$SECONDS
	if "$@"; then
		echo "==> $name: ok ($((SECONDS - t0)) s)"
	else
		echo "==> $name: FAILED ($((SECONDS - t0)) s)"
		status=1
	fi
}

go version
# Before the Go tests: under CI their agent programs are confined
# (agent.network: isolated), which needs bubblewrap on the machine.
[ "$(id -u)" = 0 ] && bash scripts/ci.d/45-sandbox.sh install
step "go test -race ./..." go test -race -count=1 -timeout 15m ./...
for part in scripts/ci.d/*.sh; do
	[ -e "$part" ] || continue
	step "$part" bash "$part"
done
exit $status
