#!/usr/bin/env bash
# The clock of agent programs (agent.clock) with Debian's libfaketime
# installed: a Python and a Node agent must read the clock's time, not
# only TZ and DRYFIRE_NOW (go test ./... runs the same test and accepts a
# machine without the library). Installs libfaketime when it is missing
# (CI runs as root).
set -euo pipefail
cd "$(dirname "$0")/../.."
lib=/usr/lib/$(uname -m)-linux-gnu/faketime/libfaketimeMT.so.1
if [ ! -f "$lib" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q libfaketime >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q libfaketime >/dev/null; }
fi
DRYFIRE_TEST_FAKETIME=1 go test -race -count=1 -run 'TestClockForPrograms' -v ./internal/runner | grep -E '^(=== RUN|--- |PASS|FAIL|ok)'
