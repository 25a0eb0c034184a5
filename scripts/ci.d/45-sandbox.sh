#!/usr/bin/env bash
# The confinement of agent programs (agent.network: isolated, sandboxed,
# report) with bubblewrap installed: a test agent tries every way out it
# knows (127.0.0.1, setns, nsenter, Unix sockets, the home directory,
# writes outside its workspace, processes outside its case) and each must
# be refused; the escape catalogue (internal/runner/testdata/escape) tries
# the known container escapes (core_pattern, uevent_helper, keyrings,
# user namespaces, mounts, modules, bpf, ...) and must find none open; go test ./... runs the same tests and skips them on a
# machine without bubblewrap or namespaces. Installs Debian's bubblewrap
# when it is missing (CI runs as root); `45-sandbox.sh install` only
# installs it: scripts/test.sh does so before the Go tests, which run
# agents confined by default under CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v bwrap >/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q bubblewrap >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q bubblewrap >/dev/null; }
fi
[ "${1:-}" = install ] && exit 0
bwrap --version
DRYFIRE_TEST_NETNS=1 go test -race -count=1 -run 'TestSandbox|TestIsolatedConfines|TestNetworkIsolated|TestNetworkReport|TestEscape' -v ./internal/runner | grep -E '^(=== RUN|--- |PASS|FAIL|ok)'
DRYFIRE_TEST_NETNS=1 go test -count=1 -run 'TestSeccomp|TestSocketNames|TestProgramFiles|TestRunKills|TestJailKills' -v ./internal/netjail ./internal/program | grep -E '^(--- |PASS|FAIL|ok)'
# The escape catalogue as a user runs it: dryfire's own suite, each way
# out a check, under both levels; the log lists what was refused.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/dryfire" ./cmd/dryfire
for level in sandboxed isolated; do
	echo "escape catalogue, agent.network: $level"
	TEST_OUTSIDE_PID=$$ "$bin/dryfire" run internal/runner/testdata/escape/escape.dryfire.yaml --network "$level" --record none -v |
		grep -E '^(PASS|FAIL)|output matches|check failed|OPEN|passed,'
done
