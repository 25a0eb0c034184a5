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

# A part whose first lines hold "# ci: side" (a client whose time is mostly
# its install and start: the coding-agent CLIs, Ray, cloud SDKs) runs beside
# the others, one side part at a time, its output kept and printed after
# the last part, with its verdict; the rest run one after another, in order.
side=$(mktemp -d)
trap 'rm -rf "$side"' EXIT
sideparts=()
for part in scripts/ci.d/*.sh; do
	[ -e "$part" ] || continue
	head -n 5 "$part" | grep -qx '# ci: side' && sideparts+=("$part")
done
(
	for part in "${sideparts[@]}"; do
		log="$side/$(basename "$part").log"
		t0=$SECONDS
		if bash "$part" >"$log" 2>&1 </dev/null; then
			echo "==> $part: ok ($((SECONDS - t0)) s, beside the others)" >>"$log"
		else
			echo "==> $part: FAILED ($((SECONDS - t0)) s, beside the others)" >>"$log"
			touch "$side/failed"
		fi
	done
) &
sidepid=$!
for part in scripts/ci.d/*.sh; do
	[ -e "$part" ] || continue
	[[ " ${sideparts[*]} " == *" $part "* ]] && continue
	step "$part" bash "$part"
done
wait "$sidepid"
for part in "${sideparts[@]}"; do
	echo
	echo "==> $part (ran beside the others)"
	cat "$side/$(basename "$part").log"
done
[ -e "$side/failed" ] && status=1
exit $status
